/*
 * jsonread.h - reading JSON back: the sweep's plan lines and result files
 * (src/cli/sweep.c).  A small recursive-descent parser into a tree; it
 * accepts what json.h writes (and any RFC 8259 text), and says where a
 * text stops being JSON, so that a file cut short by a full disk is an
 * error naming the offset, never a half-read result.
 */
#ifndef THPSIM_JSONREAD_H
#define THPSIM_JSONREAD_H

#include <stddef.h>

enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

struct jv {
	enum jv_type type;
	double num;          /* JV_NUM, and JV_BOOL as 0/1 */
	char *str;           /* JV_STR */
	int n;               /* JV_ARR, JV_OBJ: members */
	char **keys;         /* JV_OBJ */
	struct jv **items;   /* JV_ARR, JV_OBJ */
};

/* The tree of text (len bytes), or NULL with err set ("offset N: ..."). */
struct jv *jv_parse(const char *text, size_t len, char *err, size_t errlen);
void jv_free(struct jv *v);
/* obj's member key (NULL when absent or obj is not an object). */
const struct jv *jv_get(const struct jv *obj, const char *key);
/* A member's number or string, or the fallback when absent or of
 * another type. */
double jv_num(const struct jv *obj, const char *key, double fallback);
const char *jv_str(const struct jv *obj, const char *key, const char *fallback);

#endif
