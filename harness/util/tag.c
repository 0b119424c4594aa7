/* A session's tag as a name (tag.h). */
#include "harness/util/tag.h"
#include <string.h>

int tag_valid(const char *t)
{
	size_t n = t ? strlen(t) : 0;
	if (!n || n > TAG_MAX || !strcmp(t, ".") || !strcmp(t, ".."))
		return 0;
	for (const char *p = t; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			return 0;
	return 1;
}
