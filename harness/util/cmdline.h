/*
 * Kernel command lines compared word by word, apart from preempt=: the one
 * rule for "these boots differ only in their preempt mode", used by the
 * targets (may a runtime switch stand in for a boot?) and by compare and
 * report (label a pair by its preempt mode alone). Pure, unit tested.
 */
#ifndef SL_CMDLINE_H
#define SL_CMDLINE_H

/* 1 when a and b hold the same words in the same order once every
 * preempt=... word is left out (runs of blanks and tabs separate words;
 * NULL is the empty line), else 0 */
int cmdline_same_but_preempt(const char *a, const char *b);

#endif
