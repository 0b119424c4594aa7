/*
 * Quoting for a remote POSIX shell. ssh(1) joins its command arguments with
 * spaces and hands the result to the remote user's login shell (`$SHELL -c`),
 * so every word schedlab sends to an ssh target goes through exactly one of
 * these functions, and no plan value ever reaches a shell unquoted.
 *
 * Style: POSIX single quotes. A word becomes '...' with every ' written as
 * '\'' (close, escaped quote, reopen). Inside single quotes nothing is
 * special to sh, bash, dash, zsh or busybox ash: not $, `, \, ;, newlines
 * or bytes >= 0x80. The empty word becomes ''. Words made only of
 * characters that are never special ([A-Za-z0-9_@%+=:,./-]) are left bare
 * so that commands stay readable in logs. NUL cannot be passed through argv and is refused by
 * the callers (a C string ends there anyway). csh-family login shells are not
 * supported (they treat ! and newlines inside quotes specially); see
 * docs/ssh.md. Tested by tests/unit/test_shquote.c, which round-trips hostile
 * words through /bin/sh.
 */
#ifndef SL_SHQUOTE_H
#define SL_SHQUOTE_H

#include "harness/util/strbuf.h"

/* append one word, quoted */
void sh_quote(struct strbuf *out, const char *word);
/* append argv (NULL-terminated) as a command line: quoted words joined by spaces */
void sh_quote_argv(struct strbuf *out, const char *const *argv);

#endif
