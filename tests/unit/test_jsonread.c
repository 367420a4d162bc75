/*
 * test_jsonread.c - reading JSON back (src/util/jsonread.c): what json.h
 * writes comes back the same, and a text cut anywhere is an error with the
 * offset where it stopped being JSON, never a value (a sweep result cut
 * short by a full disk must not merge).
 */
#include <stdlib.h>

#include "../test.h"
#include "util/json.h"
#include "util/jsonread.h"

TEST(jsonread_reads_back_what_json_writes)
{
	char *buf = NULL, err[128];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;
	struct jv *v;
	const struct jv *arr;

	json_init(&j, f, 1);
	json_begin_object(&j, NULL);
	json_string(&j, "name", "a \"quoted\"\\ name\n\xc3\xa9");
	json_uint(&j, "big", 18446744073709551615ULL);
	json_int(&j, "neg", -42);
	json_double(&j, "x", 0.25);
	json_bool(&j, "yes", 1);
	json_null(&j, "none");
	json_begin_array(&j, "list");
	json_uint(&j, NULL, 1);
	json_uint(&j, NULL, 2);
	json_end_array(&j);
	json_end_object(&j);
	json_finish(&j);
	fclose(f);
	v = jv_parse(buf, len, err, sizeof(err));
	ASSERT(v != NULL);
	ASSERT(!strcmp(jv_str(v, "name", ""), "a \"quoted\"\\ name\n\xc3\xa9"));
	ASSERT_EQ((int64_t)jv_num(v, "neg", 0), -42);
	ASSERT(jv_num(v, "x", 0) == 0.25);
	ASSERT(jv_num(v, "big", 0) > 1.8e19);
	ASSERT_EQ((int)jv_num(v, "yes", 0), 1);
	ASSERT(jv_get(v, "none") && jv_get(v, "none")->type == JV_NULL);
	arr = jv_get(v, "list");
	ASSERT(arr && arr->type == JV_ARR && arr->n == 2 && arr->items[1]->num == 2);
	ASSERT(jv_get(v, "absent") == NULL);
	ASSERT(!strcmp(jv_str(v, "neg", "fallback"), "fallback"));
	jv_free(v);
	/* every proper prefix is an error, with its offset */
	for (size_t cut = 0; cut < len; cut++) {
		if (buf[strspn(buf + cut, " \t\n") + cut] == 0)
			continue; /* only white space cut off: still the whole value */
		v = jv_parse(buf, cut, err, sizeof(err));
		if (v) {
			jv_free(v);
			test_fail(__FILE__, __LINE__, "a text cut at %zu of %zu parsed", cut, len);
		}
		ASSERT(!strncmp(err, "offset ", 7));
	}
	free(buf);
}

TEST(jsonread_refuses_what_is_not_json)
{
	static const char *const bad[] = {
		"", "{", "{\"a\" 1}", "{\"a\":1,}", "[1 2]", "\"\\x\"", "{\"a\":1} x", "nul",
		"\"a\nb\"", "{1:2}", "01x", "\"\\u12\"",
	};
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct jv *v = jv_parse(bad[i], strlen(bad[i]), err, sizeof(err));

		if (v) {
			jv_free(v);
			test_fail(__FILE__, __LINE__, "'%s' parsed", bad[i]);
		}
	}
	{
		struct jv *v = jv_parse("{\"s\":\"\\ud83d\\ude00\"}", 20, err, sizeof(err));

		ASSERT(v && !strcmp(jv_str(v, "s", ""), "\xf0\x9f\x98\x80"));
		jv_free(v);
	}
}
