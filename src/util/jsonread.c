/*
 * jsonread.c - a JSON text into a tree (jsonread.h).
 *
 * Recursive descent over the bytes, depth-limited; strings are unescaped
 * (\uXXXX to UTF-8, surrogate pairs joined); numbers go through strtod.
 * Every failure reports the byte offset where the text stopped being JSON.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonread.h"

#define JV_MAX_DEPTH 64

struct jp {
	const char *s;
	size_t len, pos;
	char *err;
	size_t errlen;
	int failed;
};

__attribute__((format(printf, 2, 3))) static void fail(struct jp *p, const char *fmt, ...)
{
	char what[160];
	va_list ap;

	if (p->failed)
		return;
	p->failed = 1;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "offset %zu: %s", p->pos, what);
}

static void ws(struct jp *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]))
		p->pos++;
}

static struct jv *node(struct jp *p, enum jv_type t)
{
	struct jv *v = calloc(1, sizeof(*v));

	if (!v)
		fail(p, "out of memory");
	else
		v->type = t;
	return v;
}

static int push(struct jp *p, struct jv *v, char *key, struct jv *item)
{
	struct jv **items = realloc(v->items, (size_t)(v->n + 1) * sizeof(*items));
	char **keys = v->type == JV_OBJ ? realloc(v->keys, (size_t)(v->n + 1) * sizeof(*keys)) : NULL;

	if (items)
		v->items = items;
	if (keys)
		v->keys = keys;
	if (!items || (v->type == JV_OBJ && !keys)) {
		fail(p, "out of memory");
		return -1;
	}
	v->items[v->n] = item;
	if (v->type == JV_OBJ)
		v->keys[v->n] = key;
	v->n++;
	return 0;
}

static void put_utf8(char *out, size_t *o, unsigned c)
{
	if (c < 0x80) {
		out[(*o)++] = (char)c;
	} else if (c < 0x800) {
		out[(*o)++] = (char)(0xc0 | (c >> 6));
		out[(*o)++] = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		out[(*o)++] = (char)(0xe0 | (c >> 12));
		out[(*o)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (c & 0x3f));
	} else {
		out[(*o)++] = (char)(0xf0 | (c >> 18));
		out[(*o)++] = (char)(0x80 | ((c >> 12) & 0x3f));
		out[(*o)++] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[(*o)++] = (char)(0x80 | (c & 0x3f));
	}
}

static int hex4(struct jp *p, unsigned *out)
{
	*out = 0;
	if (p->pos + 4 > p->len) {
		fail(p, "a \\u escape cut short");
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos++];

		*out <<= 4;
		if (c >= '0' && c <= '9')
			*out |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*out |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*out |= (unsigned)(c - 'A' + 10);
		else {
			fail(p, "'%c' in a \\u escape", c);
			return -1;
		}
	}
	return 0;
}

/* A string at p->pos (the opening quote): its unescaped bytes. */
static char *string(struct jp *p)
{
	size_t start = ++p->pos, o = 0;
	char *out;

	/* the unescaped text is never longer than the escaped one */
	while (p->pos < p->len && p->s[p->pos] != '"')
		p->pos += p->s[p->pos] == '\\' ? 2 : 1;
	if (p->pos >= p->len) {
		p->pos = p->len;
		fail(p, "a string that does not end");
		return NULL;
	}
	out = malloc(p->pos - start + 1);
	if (!out) {
		fail(p, "out of memory");
		return NULL;
	}
	p->pos = start;
	while (p->s[p->pos] != '"') {
		char c = p->s[p->pos++];
		unsigned u, lo;

		if ((unsigned char)c < 0x20) {
			fail(p, "a control character in a string");
			free(out);
			return NULL;
		}
		if (c != '\\') {
			out[o++] = c;
			continue;
		}
		c = p->s[p->pos++];
		switch (c) {
		case '"': case '\\': case '/': out[o++] = c; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u':
			if (hex4(p, &u)) {
				free(out);
				return NULL;
			}
			if (u >= 0xd800 && u < 0xdc00 && p->pos + 6 <= p->len && p->s[p->pos] == '\\' &&
			    p->s[p->pos + 1] == 'u') {
				p->pos += 2;
				if (hex4(p, &lo)) {
					free(out);
					return NULL;
				}
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
			}
			put_utf8(out, &o, u);
			break;
		default:
			fail(p, "'\\%c' is not an escape", c);
			free(out);
			return NULL;
		}
	}
	p->pos++;
	out[o] = 0;
	return out;
}

static struct jv *value(struct jp *p, int depth);

static struct jv *container(struct jp *p, int depth, int obj)
{
	struct jv *v = node(p, obj ? JV_OBJ : JV_ARR);
	const char close = obj ? '}' : ']';

	if (!v)
		return NULL;
	p->pos++;
	ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return v;
	}
	for (;;) {
		char *key = NULL;
		struct jv *item;

		ws(p);
		if (obj) {
			if (p->pos >= p->len || p->s[p->pos] != '"') {
				fail(p, p->pos >= p->len ? "the text ends inside an object"
							  : "a member name must be a string");
				break;
			}
			key = string(p);
			if (!key)
				break;
			ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') {
				fail(p, "':' expected after a member name");
				free(key);
				break;
			}
			p->pos++;
		}
		item = value(p, depth + 1);
		if (!item || push(p, v, key, item)) {
			free(key);
			jv_free(item);
			break;
		}
		ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			return v;
		}
		if (p->pos >= p->len)
			fail(p, "the text ends inside %s", obj ? "an object" : "an array");
		else
			fail(p, "',' or '%c' expected", close);
		break;
	}
	jv_free(v);
	return NULL;
}

static struct jv *value(struct jp *p, int depth)
{
	struct jv *v;

	ws(p);
	if (depth > JV_MAX_DEPTH) {
		fail(p, "nested deeper than %d", JV_MAX_DEPTH);
		return NULL;
	}
	if (p->pos >= p->len) {
		fail(p, "the text ends where a value should be");
		return NULL;
	}
	switch (p->s[p->pos]) {
	case '{':
		return container(p, depth, 1);
	case '[':
		return container(p, depth, 0);
	case '"': {
		char *s = string(p);

		if (!s)
			return NULL;
		v = node(p, JV_STR);
		if (v)
			v->str = s;
		else
			free(s);
		return v;
	}
	default:
		break;
	}
	static const struct { const char *word; enum jv_type t; double num; } words[] = {
		{ "true", JV_BOOL, 1 }, { "false", JV_BOOL, 0 }, { "null", JV_NULL, 0 },
	};
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].word);

		if (p->len - p->pos >= n && !memcmp(p->s + p->pos, words[i].word, n)) {
			p->pos += n;
			v = node(p, words[i].t);
			if (v)
				v->num = words[i].num;
			return v;
		}
	}
	if (p->s[p->pos] == '-' || (p->s[p->pos] >= '0' && p->s[p->pos] <= '9')) {
		char buf[64], *end;
		size_t n = 0;

		while (p->pos + n < p->len && n < sizeof(buf) - 1 &&
		       strchr("+-0123456789.eE", p->s[p->pos + n]))
			n++;
		memcpy(buf, p->s + p->pos, n);
		buf[n] = 0;
		errno = 0;
		v = node(p, JV_NUM);
		if (!v)
			return NULL;
		v->num = strtod(buf, &end);
		if (end == buf || *end || errno) {
			fail(p, "'%s' is not a number", buf);
			jv_free(v);
			return NULL;
		}
		p->pos += n;
		return v;
	}
	fail(p, "'%c' cannot start a value", p->s[p->pos]);
	return NULL;
}

struct jv *jv_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct jp p = { .s = text, .len = len, .err = err, .errlen = errlen };
	struct jv *v = value(&p, 0);

	if (v) {
		ws(&p);
		if (p.pos != p.len) {
			fail(&p, "more after the value");
			jv_free(v);
			v = NULL;
		}
	}
	return v;
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	for (int i = 0; i < v->n; i++) {
		jv_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
	free(v);
}

const struct jv *jv_get(const struct jv *obj, const char *key)
{
	if (!obj || obj->type != JV_OBJ)
		return NULL;
	for (int i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return obj->items[i];
	return NULL;
}

double jv_num(const struct jv *obj, const char *key, double fallback)
{
	const struct jv *v = jv_get(obj, key);

	return v && (v->type == JV_NUM || v->type == JV_BOOL) ? v->num : fallback;
}

const char *jv_str(const struct jv *obj, const char *key, const char *fallback)
{
	const struct jv *v = jv_get(obj, key);

	return v && v->type == JV_STR ? v->str : fallback;
}
