/* A small JSON reader and writer: see json.h. RFC 8259, nesting limited to RJ_MAX_DEPTH. */
#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RJ_MAX_DEPTH 128

static void *rj_alloc(size_t size) {
    void *p = malloc(size ? size : 1);
    if (!p) abort();
    return p;
}

static void *rj_grow(void *p, size_t size) {
    p = realloc(p, size ? size : 1);
    if (!p) abort();
    return p;
}

static rj_value *rj_new(rj_type type) {
    rj_value *v = rj_alloc(sizeof *v);
    memset(v, 0, sizeof *v);
    v->type = type;
    return v;
}

static char *rj_copy(const char *s, size_t len) {
    char *c = rj_alloc(len + 1);
    memcpy(c, s, len);
    c[len] = 0;
    return c;
}

void rj_free(rj_value *v) {
    if (!v) return;
    for (size_t i = 0; i < v->count; i++) {
        if (v->keys) free(v->keys[i]);
        rj_free(v->items[i]);
    }
    free(v->keys);
    free(v->items);
    free(v->text);
    free(v);
}

rj_value *rj_null(void) { return rj_new(RJ_NULL); }
rj_value *rj_object(void) { return rj_new(RJ_OBJECT); }
rj_value *rj_array(void) { return rj_new(RJ_ARRAY); }

rj_value *rj_string_n(const char *s, size_t len) {
    rj_value *v = rj_new(RJ_STRING);
    v->text = rj_copy(s, len);
    v->len = len;
    return v;
}

rj_value *rj_string(const char *s) { return rj_string_n(s, strlen(s)); }

rj_value *rj_int(int64_t n) {
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%lld", (long long)n);
    rj_value *v = rj_new(RJ_NUMBER);
    v->text = rj_copy(buf, (size_t)len);
    v->len = (size_t)len;
    return v;
}

/* Appends a member (key may be NULL for arrays); takes ownership of key and value. */
static void rj_append(rj_value *v, char *key, rj_value *item) {
    if (v->count == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 4;
        v->items = rj_grow(v->items, v->cap * sizeof *v->items);
        if (v->type == RJ_OBJECT) v->keys = rj_grow(v->keys, v->cap * sizeof *v->keys);
    }
    if (v->type == RJ_OBJECT) v->keys[v->count] = key;
    v->items[v->count++] = item;
}

rj_value *rj_get(const rj_value *object, const char *key) {
    if (!object || object->type != RJ_OBJECT) return NULL;
    for (size_t i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) return object->items[i];
    return NULL;
}

bool rj_is_string(const rj_value *v, const char *s) {
    return v && v->type == RJ_STRING && v->len == strlen(s) && memcmp(v->text, s, v->len) == 0;
}

void rj_set(rj_value *object, const char *key, rj_value *value) {
    for (size_t i = 0; i < object->count; i++) {
        if (strcmp(object->keys[i], key) == 0) {
            rj_free(object->items[i]);
            object->items[i] = value;
            return;
        }
    }
    rj_append(object, rj_copy(key, strlen(key)), value);
}

void rj_push(rj_value *array, rj_value *value) { rj_append(array, NULL, value); }

/* ---- reader ---- */

typedef struct {
    const char *s;
    size_t len;
    size_t pos;
    char *error;
    size_t error_size;
    bool failed;
} rj_reader;

static void rj_fail(rj_reader *r, const char *what) {
    if (r->failed) return;
    r->failed = true;
    if (r->error && r->error_size) snprintf(r->error, r->error_size, "%s at byte %zu", what, r->pos);
}

static void rj_skip_space(rj_reader *r) {
    while (r->pos < r->len) {
        char c = r->s[r->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        r->pos++;
    }
}

static bool rj_literal(rj_reader *r, const char *word) {
    size_t n = strlen(word);
    if (r->len - r->pos < n || memcmp(r->s + r->pos, word, n) != 0) {
        rj_fail(r, "unexpected character");
        return false;
    }
    r->pos += n;
    return true;
}

typedef struct {
    char *p;
    size_t len, cap;
} rj_buf;

static void rj_put(rj_buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        while (b->len + n + 1 > b->cap) b->cap = b->cap ? b->cap * 2 : 32;
        b->p = rj_grow(b->p, b->cap);
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static void rj_put_utf8(rj_buf *b, uint32_t c) {
    char u[4];
    size_t n;
    if (c < 0x80) {
        u[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (char)(0xC0 | (c >> 6));
        u[1] = (char)(0x80 | (c & 0x3F));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (char)(0xE0 | (c >> 12));
        u[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        u[2] = (char)(0x80 | (c & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (c >> 18));
        u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        u[3] = (char)(0x80 | (c & 0x3F));
        n = 4;
    }
    rj_put(b, u, n);
}

static bool rj_hex4(rj_reader *r, uint32_t *out) {
    if (r->len - r->pos < 4) {
        rj_fail(r, "short \\u escape");
        return false;
    }
    uint32_t c = 0;
    for (int i = 0; i < 4; i++) {
        char h = r->s[r->pos++];
        c <<= 4;
        if (h >= '0' && h <= '9') c |= (uint32_t)(h - '0');
        else if (h >= 'a' && h <= 'f') c |= (uint32_t)(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') c |= (uint32_t)(h - 'A' + 10);
        else {
            rj_fail(r, "bad \\u escape");
            return false;
        }
    }
    *out = c;
    return true;
}

/* Reads a string after its opening quote into a new buffer (NULL on failure). */
static char *rj_read_string(rj_reader *r, size_t *len) {
    rj_buf b = {0};
    rj_put(&b, "", 0);
    for (;;) {
        if (r->pos >= r->len) {
            rj_fail(r, "unterminated string");
            break;
        }
        char c = r->s[r->pos++];
        if (c == '"') {
            *len = b.len;
            return b.p;
        }
        if ((unsigned char)c < 0x20) {
            rj_fail(r, "control character in string");
            break;
        }
        if (c != '\\') {
            rj_put(&b, &c, 1);
            continue;
        }
        if (r->pos >= r->len) {
            rj_fail(r, "unterminated string");
            break;
        }
        char e = r->s[r->pos++];
        const char *plain = NULL;
        switch (e) {
        case '"': plain = "\""; break;
        case '\\': plain = "\\"; break;
        case '/': plain = "/"; break;
        case 'b': plain = "\b"; break;
        case 'f': plain = "\f"; break;
        case 'n': plain = "\n"; break;
        case 'r': plain = "\r"; break;
        case 't': plain = "\t"; break;
        case 'u': {
            uint32_t cp;
            if (!rj_hex4(r, &cp)) goto fail;
            if (cp >= 0xD800 && cp < 0xDC00) {
                uint32_t low;
                if (r->len - r->pos < 2 || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u') {
                    rj_fail(r, "lone surrogate");
                    goto fail;
                }
                r->pos += 2;
                if (!rj_hex4(r, &low)) goto fail;
                if (low < 0xDC00 || low > 0xDFFF) {
                    rj_fail(r, "lone surrogate");
                    goto fail;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                rj_fail(r, "lone surrogate");
                goto fail;
            }
            rj_put_utf8(&b, cp);
            continue;
        }
        default: rj_fail(r, "bad escape"); goto fail;
        }
        rj_put(&b, plain, 1);
    }
fail:
    free(b.p);
    return NULL;
}

static bool rj_digits(rj_reader *r) {
    size_t start = r->pos;
    while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') r->pos++;
    return r->pos > start;
}

static rj_value *rj_read_number(rj_reader *r) {
    size_t start = r->pos;
    if (r->s[r->pos] == '-') r->pos++;
    if (r->pos < r->len && r->s[r->pos] == '0') r->pos++;
    else if (!rj_digits(r)) goto bad;
    if (r->pos < r->len && r->s[r->pos] == '.') {
        r->pos++;
        if (!rj_digits(r)) goto bad;
    }
    if (r->pos < r->len && (r->s[r->pos] == 'e' || r->s[r->pos] == 'E')) {
        r->pos++;
        if (r->pos < r->len && (r->s[r->pos] == '+' || r->s[r->pos] == '-')) r->pos++;
        if (!rj_digits(r)) goto bad;
    }
    rj_value *v = rj_new(RJ_NUMBER);
    v->len = r->pos - start;
    v->text = rj_copy(r->s + start, v->len);
    return v;
bad:
    rj_fail(r, "bad number");
    return NULL;
}

static rj_value *rj_read_value(rj_reader *r, int depth) {
    rj_skip_space(r);
    if (r->pos >= r->len) {
        rj_fail(r, "unexpected end of input");
        return NULL;
    }
    if (depth > RJ_MAX_DEPTH) {
        rj_fail(r, "nesting too deep");
        return NULL;
    }
    char c = r->s[r->pos];
    if (c == '{' || c == '[') {
        bool object = c == '{';
        char close = object ? '}' : ']';
        rj_value *v = rj_new(object ? RJ_OBJECT : RJ_ARRAY);
        r->pos++;
        rj_skip_space(r);
        if (r->pos < r->len && r->s[r->pos] == close) {
            r->pos++;
            return v;
        }
        for (;;) {
            char *key = NULL;
            if (object) {
                rj_skip_space(r);
                size_t key_len;
                if (r->pos >= r->len || r->s[r->pos] != '"') {
                    rj_fail(r, "expected a member name");
                    break;
                }
                r->pos++;
                key = rj_read_string(r, &key_len);
                if (!key) break;
                rj_skip_space(r);
                if (r->pos >= r->len || r->s[r->pos] != ':') {
                    free(key);
                    rj_fail(r, "expected ':'");
                    break;
                }
                r->pos++;
            }
            rj_value *item = rj_read_value(r, depth + 1);
            if (!item) {
                free(key);
                break;
            }
            rj_append(v, key, item);
            rj_skip_space(r);
            if (r->pos < r->len && r->s[r->pos] == ',') {
                r->pos++;
                continue;
            }
            if (r->pos < r->len && r->s[r->pos] == close) {
                r->pos++;
                return v;
            }
            rj_fail(r, object ? "expected ',' or '}'" : "expected ',' or ']'");
            break;
        }
        rj_free(v);
        return NULL;
    }
    if (c == '"') {
        r->pos++;
        size_t len;
        char *text = rj_read_string(r, &len);
        if (!text) return NULL;
        rj_value *v = rj_new(RJ_STRING);
        v->text = text;
        v->len = len;
        return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return rj_read_number(r);
    if (c == 't' || c == 'f') {
        bool yes = c == 't';
        if (!rj_literal(r, yes ? "true" : "false")) return NULL;
        rj_value *v = rj_new(RJ_BOOL);
        v->boolean = yes;
        return v;
    }
    if (c == 'n') return rj_literal(r, "null") ? rj_new(RJ_NULL) : NULL;
    rj_fail(r, "unexpected character");
    return NULL;
}

rj_value *rj_parse(const char *text, size_t len, char *error, size_t error_size) {
    rj_reader r = {text, len, 0, error, error_size, false};
    rj_value *v = rj_read_value(&r, 0);
    if (!v) return NULL;
    rj_skip_space(&r);
    if (r.pos != r.len) {
        rj_fail(&r, "trailing characters");
        rj_free(v);
        return NULL;
    }
    return v;
}

/* ---- writer ---- */

static void rj_write_string(rj_buf *b, const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    rj_put(b, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': rj_put(b, "\\\"", 2); break;
        case '\\': rj_put(b, "\\\\", 2); break;
        case '\n': rj_put(b, "\\n", 2); break;
        case '\r': rj_put(b, "\\r", 2); break;
        case '\t': rj_put(b, "\\t", 2); break;
        default:
            if (c < 0x20) {
                char u[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
                rj_put(b, u, 6);
            } else {
                rj_put(b, (const char *)&s[i], 1);
            }
        }
    }
    rj_put(b, "\"", 1);
}

static void rj_write_value(rj_buf *b, const rj_value *v) {
    switch (v->type) {
    case RJ_NULL: rj_put(b, "null", 4); break;
    case RJ_BOOL: v->boolean ? rj_put(b, "true", 4) : rj_put(b, "false", 5); break;
    case RJ_NUMBER: rj_put(b, v->text, v->len); break;
    case RJ_STRING: rj_write_string(b, v->text, v->len); break;
    case RJ_ARRAY:
    case RJ_OBJECT: {
        bool object = v->type == RJ_OBJECT;
        rj_put(b, object ? "{" : "[", 1);
        for (size_t i = 0; i < v->count; i++) {
            if (i) rj_put(b, ",", 1);
            if (object) {
                rj_write_string(b, v->keys[i], strlen(v->keys[i]));
                rj_put(b, ":", 1);
            }
            rj_write_value(b, v->items[i]);
        }
        rj_put(b, object ? "}" : "]", 1);
        break;
    }
    }
}

char *rj_write(const rj_value *value, size_t *len) {
    rj_buf b = {0};
    rj_put(&b, "", 0);
    rj_write_value(&b, value);
    if (len) *len = b.len;
    return b.p;
}
