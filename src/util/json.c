/*
 * json.c - the streaming JSON writer of json.h.
 */
#include "json.h"

#include <math.h>

void json_init(struct json *j, FILE *f, int pretty)
{
	j->f = f;
	j->depth = 0;
	j->first[0] = 1;
	j->pretty = pretty;
}

void json_quote(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* Separator, indentation and key before a member. */
static void member(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputc(',', j->f);
		if (j->pretty) {
			fputc('\n', j->f);
			for (int i = 0; i < j->depth; i++)
				fputs("  ", j->f);
		}
	}
	j->first[j->depth] = 0;
	if (key) {
		json_quote(j->f, key);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void open_(struct json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = 1;
}

static void close_(struct json *j, char c)
{
	int empty = j->first[j->depth];

	j->depth--;
	if (j->pretty && !empty) {
		fputc('\n', j->f);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->f);
	}
	fputc(c, j->f);
}

void json_begin_object(struct json *j, const char *key) { open_(j, key, '{'); }
void json_end_object(struct json *j) { close_(j, '}'); }
void json_begin_array(struct json *j, const char *key) { open_(j, key, '['); }
void json_end_array(struct json *j) { close_(j, ']'); }

void json_uint(struct json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_int(struct json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void json_double(struct json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void json_exact(struct json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.17g", v);
	else
		fputs("null", j->f);
}

void json_string(struct json *j, const char *key, const char *s)
{
	member(j, key);
	json_quote(j->f, s);
}

void json_bool(struct json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void json_finish(struct json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
