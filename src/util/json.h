/*
 * json.h - a small streaming JSON writer: objects, arrays, keys, numbers and
 * strings, with the commas and indentation handled here.
 */
#ifndef THPSIM_JSON_H
#define THPSIM_JSON_H

#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *f;
	int depth;
	int first[32]; /* no member written yet at this depth */
	int pretty;
};

void json_init(struct json *j, FILE *f, int pretty);
void json_begin_object(struct json *j, const char *key);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);
void json_uint(struct json *j, const char *key, uint64_t v);
void json_int(struct json *j, const char *key, int64_t v);
void json_double(struct json *j, const char *key, double v);   /* 6 digits */
void json_exact(struct json *j, const char *key, double v);    /* every digit: reads back equal */
void json_string(struct json *j, const char *key, const char *s);
void json_bool(struct json *j, const char *key, int v);
void json_null(struct json *j, const char *key);
/* Finish the document with a newline. */
void json_finish(struct json *j);
/* Write s as a JSON string literal (quotes included). */
void json_quote(FILE *f, const char *s);

#endif
