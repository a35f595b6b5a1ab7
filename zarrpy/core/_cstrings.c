/*
 * zarrpy.core._cstrings: variable-length element layouts <-> numpy arrays,
 * without a Python object per element.
 *
 * Layouts (see zarrpy/codecs/vlen_v2.py and zarrpy/core/array_bytes.py):
 *   interleaved: [n: u32 LE] then per element [nbytes: u32 LE][bytes]
 *   offsets:     int64 offsets[n + 1] from 0, and the elements' bytes joined
 *
 * Strings go to and from numpy's StringDType through the NpyString API
 * (numpy >= 2.0): the allocator is acquired with the GIL released and
 * released before the GIL is taken back, as numpy asks, so chunks convert in
 * parallel on a thread pool (chunks of one array share its allocator's lock).
 * Bytes go to and from object arrays of `bytes` (that needs the GIL).
 *
 * Malformed data is not raised here: a function returns a tuple
 * (code, index, value) and zarrpy.core.vlen_kernels words the error, so the
 * compiled path and the pure-Python one say the same thing. Codes are the
 * E_* constants below, exported as module attributes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>

enum {
    E_SHORT = 1,         /* buffer shorter than the 4-byte count; value: length */
    E_COUNT = 2,         /* header count differs; index: the count, value: expected */
    E_TRUNCATED = 3,     /* too short for count length prefixes; index: count, value: length */
    E_PREFIX_PAST = 4,   /* element index's length prefix runs past the end; value: count */
    E_DATA_PAST = 5,     /* element index's bytes run past the end; value: length */
    E_UTF8 = 6,          /* element index is not valid UTF-8 */
    E_TRAILING = 7,      /* value: bytes after the last element */
    E_TOO_MANY = 8,      /* encode: index elements do not fit a u32 count */
    E_TOO_LONG = 9,      /* encode: element index has value bytes, more than a u32 */
    E_NOT_TYPE = 10,     /* encode: element index is not str / bytes */
    E_MISSING = 11,      /* encode: element index is missing (StringDType NA) */
    E_OFFSETS = 12,      /* offsets decrease at index or end past the data; value: offset */
    E_NO_MEMORY = 13,
};

#define U32_MAX 4294967295ULL

static PyObject *
fail(int code, Py_ssize_t index, Py_ssize_t value)
{
    return Py_BuildValue("(inn)", code, index, value);
}

static inline uint32_t
load_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void
store_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

/* Well-formed UTF-8 as Python's strict decoder accepts it (Unicode table
 * 3-7: no overlongs, no surrogates, nothing above U+10FFFF). */
static int
utf8_valid(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        while (i + 8 <= len) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ULL) {
                break;
            }
            i += 8;
        }
        while (i < len && s[i] < 0x80) {
            i++;
        }
        if (i >= len) {
            return 1;
        }
        unsigned char c = s[i];
        if (c < 0xC2) {
            return 0;
        }
        if (c < 0xE0) {
            if (len - i < 2 || (s[i + 1] & 0xC0) != 0x80) {
                return 0;
            }
            i += 2;
        }
        else if (c < 0xF0) {
            if (len - i < 3) {
                return 0;
            }
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) {
                return 0;
            }
            if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F)) {
                return 0;
            }
            i += 3;
        }
        else if (c < 0xF5) {
            if (len - i < 4) {
                return 0;
            }
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) {
                return 0;
            }
            if ((c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F)) {
                return 0;
            }
            i += 4;
        }
        else {
            return 0;
        }
    }
    return 1;
}

/* -- C-order walk over the elements of an array of any strides ----------- */

typedef struct {
    int ndim;
    char *base;
    char *ptr;
    npy_intp shape[NPY_MAXDIMS];
    npy_intp strides[NPY_MAXDIMS];
    npy_intp index[NPY_MAXDIMS];
    npy_intp size;
    int contiguous;
    npy_intp itemsize;
} Walk;

static void
walk_init(Walk *w, PyArrayObject *arr)
{
    w->ndim = PyArray_NDIM(arr);
    w->base = w->ptr = PyArray_BYTES(arr);
    w->size = PyArray_SIZE(arr);
    w->itemsize = PyArray_ITEMSIZE(arr);
    w->contiguous = PyArray_IS_C_CONTIGUOUS(arr);
    for (int d = 0; d < w->ndim; d++) {
        w->shape[d] = PyArray_DIM(arr, d);
        w->strides[d] = PyArray_STRIDE(arr, d);
        w->index[d] = 0;
    }
}

/* The pointer to the current element, then advance one element. */
static inline char *
walk_next(Walk *w)
{
    char *p = w->ptr;
    if (w->contiguous) {
        w->ptr += w->itemsize;
        return p;
    }
    for (int d = w->ndim - 1; d >= 0; d--) {
        if (++w->index[d] < w->shape[d]) {
            w->ptr += w->strides[d];
            return p;
        }
        w->index[d] = 0;
        w->ptr -= w->strides[d] * (w->shape[d] - 1);
    }
    return p;
}

static int
is_string_array(PyObject *obj)
{
    return PyArray_Check(obj) && PyArray_DESCR((PyArrayObject *)obj)->type_num == NPY_VSTRING;
}

static int
is_object_array(PyObject *obj)
{
    return PyArray_Check(obj) && PyArray_DESCR((PyArrayObject *)obj)->type_num == NPY_OBJECT;
}

static npy_string_allocator *
allocator_of(PyArrayObject *arr)
{
    return NpyString_acquire_allocator((PyArray_StringDTypeObject *)PyArray_DESCR(arr));
}

/* -- interleaved structure ------------------------------------------------ */

typedef struct {
    int code;
    Py_ssize_t index;
    Py_ssize_t value;
} Err;

/* Check the count header and the room for n length prefixes. */
static int
check_header(const unsigned char *buf, Py_ssize_t len, Py_ssize_t n, Err *e)
{
    if (len < 4) {
        *e = (Err){E_SHORT, 0, len};
        return -1;
    }
    uint32_t count = load_u32(buf);
    if ((Py_ssize_t)count != n) {
        *e = (Err){E_COUNT, (Py_ssize_t)count, n};
        return -1;
    }
    if ((len - 4) / 4 < n) {
        *e = (Err){E_TRUNCATED, n, len};
        return -1;
    }
    return 0;
}

/* Element i at *pos: its bytes and length; advances *pos. */
static inline int
next_element(const unsigned char *buf, Py_ssize_t len, Py_ssize_t *pos, Py_ssize_t i, Py_ssize_t n,
             const unsigned char **data, Py_ssize_t *nbytes, Err *e)
{
    if (len - *pos < 4) {
        *e = (Err){E_PREFIX_PAST, i, n};
        return -1;
    }
    uint32_t size = load_u32(buf + *pos);
    *pos += 4;
    if ((uint64_t)(len - *pos) < (uint64_t)size) {
        *e = (Err){E_DATA_PAST, i, len};
        return -1;
    }
    *data = buf + *pos;
    *nbytes = (Py_ssize_t)size;
    *pos += size;
    return 0;
}

static int
check_trailing(Py_ssize_t pos, Py_ssize_t len, int allow_trailing, Err *e)
{
    if (pos < len && !allow_trailing) {
        *e = (Err){E_TRAILING, 0, len - pos};
        return -1;
    }
    return 0;
}

/* -- interleaved -> StringDType ------------------------------------------- */

static PyObject *
interleaved_to_strings(PyObject *self, PyObject *args)
{
    Py_buffer view;
    PyObject *out_obj, *mask_obj, *flags_obj = Py_None;
    int allow_trailing, has_na;
    if (!PyArg_ParseTuple(args, "y*OOpp|O", &view, &out_obj, &mask_obj, &allow_trailing, &has_na, &flags_obj)) {
        return NULL;
    }
    PyObject *result = NULL;
    PyArrayObject *mask = NULL;
    if (!is_string_array(out_obj) || !PyArray_ISWRITEABLE((PyArrayObject *)out_obj)) {
        PyErr_SetString(PyExc_TypeError, "out must be a writable StringDType array");
        goto done;
    }
    PyArrayObject *out = (PyArrayObject *)out_obj;
    npy_intp size = PyArray_SIZE(out);
    PyArrayObject *flags = NULL;
    if (flags_obj != Py_None) {
        if (!is_string_array(flags_obj) || !PyArray_ISWRITEABLE((PyArrayObject *)flags_obj)
            || PyArray_SIZE((PyArrayObject *)flags_obj) != size) {
            PyErr_SetString(PyExc_TypeError, "flags must be a writable StringDType array of out's size");
            goto done;
        }
        flags = (PyArrayObject *)flags_obj;
    }
    const npy_bool *present = NULL;
    Py_ssize_t n = size;
    if (mask_obj != Py_None) {
        mask = (PyArrayObject *)PyArray_FROMANY(mask_obj, NPY_BOOL, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (mask == NULL) {
            goto done;
        }
        if (PyArray_SIZE(mask) != size) {
            PyErr_SetString(PyExc_ValueError, "mask must have one entry per element of out");
            goto done;
        }
        present = (const npy_bool *)PyArray_DATA(mask);
        n = 0;
        for (npy_intp k = 0; k < size; k++) {
            n += present[k] != 0;
        }
    }
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t len = view.len;
    Err e = {0, 0, 0};
    int nomem = 0;
    Walk w, wf;
    memset(&wf, 0, sizeof(wf));
    walk_init(&w, out);
    if (flags != NULL) {
        walk_init(&wf, flags);
    }
    PyArray_Descr *descrs[2] = {PyArray_DESCR(out), flags != NULL ? PyArray_DESCR(flags) : PyArray_DESCR(out)};
    npy_string_allocator *allocators[2] = {NULL, NULL};
    NPY_BEGIN_THREADS_DEF;
    NPY_BEGIN_THREADS;
    NpyString_acquire_allocators(2, descrs, allocators);
    npy_string_allocator *allocator = allocators[0];
    if (check_header(buf, len, n, &e) == 0) {
        Py_ssize_t pos = 4, i = 0;
        for (npy_intp k = 0; k < size; k++) {
            npy_packed_static_string *slot = (npy_packed_static_string *)walk_next(&w);
            if (flags != NULL) {
                /* "" where present, one NUL where missing (paired reads, see vlen_kernels) */
                int is_missing = present != NULL && !present[k];
                if (NpyString_pack(allocators[1], (npy_packed_static_string *)walk_next(&wf), "", is_missing) < 0) {
                    nomem = 1;
                    break;
                }
            }
            if (present != NULL && !present[k]) {
                int rc = has_na ? NpyString_pack_null(allocator, slot) : NpyString_pack(allocator, slot, "", 0);
                if (rc < 0) {
                    nomem = 1;
                    break;
                }
                continue;
            }
            const unsigned char *data;
            Py_ssize_t nbytes;
            if (next_element(buf, len, &pos, i, n, &data, &nbytes, &e) < 0) {
                break;
            }
            if (!utf8_valid(data, (size_t)nbytes)) {
                e = (Err){E_UTF8, i, 0};
                break;
            }
            if (NpyString_pack(allocator, slot, (const char *)data, (size_t)nbytes) < 0) {
                nomem = 1;
                break;
            }
            i++;
        }
        if (!e.code && !nomem) {
            check_trailing(pos, len, allow_trailing, &e);
        }
    }
    NpyString_release_allocators(2, allocators);
    NPY_END_THREADS;
    if (nomem) {
        PyErr_NoMemory();
    }
    else if (e.code) {
        result = fail(e.code, e.index, e.value);
    }
    else {
        result = Py_NewRef(Py_None);
    }
done:
    Py_XDECREF(mask);
    PyBuffer_Release(&view);
    return result;
}

/* -- offsets + data -> StringDType ---------------------------------------- */

/* int64 offsets of n+1 entries, C-contiguous (a new reference), or NULL. */
static PyArrayObject *
offsets_array(PyObject *obj, npy_intp n)
{
    PyArrayObject *arr = (PyArrayObject *)PyArray_FROMANY(obj, NPY_INT64, 1, 1, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (arr != NULL && PyArray_SIZE(arr) != n + 1) {
        PyErr_Format(PyExc_ValueError, "%zd elements need %zd offsets, got %zd", (Py_ssize_t)n, (Py_ssize_t)(n + 1),
                     (Py_ssize_t)PyArray_SIZE(arr));
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

static int
check_offsets(const int64_t *o, npy_intp n, Py_ssize_t len, Err *e)
{
    if (o[0] < 0 || o[0] > len) {
        *e = (Err){E_OFFSETS, 0, (Py_ssize_t)o[0]};
        return -1;
    }
    for (npy_intp k = 0; k < n; k++) {
        if (o[k + 1] < o[k] || o[k + 1] > len) {
            *e = (Err){E_OFFSETS, k + 1, (Py_ssize_t)o[k + 1]};
            return -1;
        }
    }
    return 0;
}

static PyObject *
offsets_to_strings(PyObject *self, PyObject *args)
{
    PyObject *offsets_obj, *out_obj;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "Oy*O", &offsets_obj, &view, &out_obj)) {
        return NULL;
    }
    PyObject *result = NULL;
    PyArrayObject *offsets = NULL;
    if (!is_string_array(out_obj) || !PyArray_ISWRITEABLE((PyArrayObject *)out_obj)) {
        PyErr_SetString(PyExc_TypeError, "out must be a writable StringDType array");
        goto done;
    }
    PyArrayObject *out = (PyArrayObject *)out_obj;
    npy_intp n = PyArray_SIZE(out);
    offsets = offsets_array(offsets_obj, n);
    if (offsets == NULL) {
        goto done;
    }
    const int64_t *o = (const int64_t *)PyArray_DATA(offsets);
    const unsigned char *buf = (const unsigned char *)view.buf;
    Err e = {0, 0, 0};
    int nomem = 0;
    Walk w;
    walk_init(&w, out);
    NPY_BEGIN_THREADS_DEF;
    NPY_BEGIN_THREADS;
    if (check_offsets(o, n, view.len, &e) == 0) {
        npy_string_allocator *allocator = allocator_of(out);
        for (npy_intp k = 0; k < n; k++) {
            const unsigned char *data = buf + o[k];
            size_t nbytes = (size_t)(o[k + 1] - o[k]);
            npy_packed_static_string *slot = (npy_packed_static_string *)walk_next(&w);
            if (!utf8_valid(data, nbytes)) {
                e = (Err){E_UTF8, k, 0};
                break;
            }
            if (NpyString_pack(allocator, slot, (const char *)data, nbytes) < 0) {
                nomem = 1;
                break;
            }
        }
        NpyString_release_allocator(allocator);
    }
    NPY_END_THREADS;
    if (nomem) {
        PyErr_NoMemory();
    }
    else if (e.code) {
        result = fail(e.code, e.index, e.value);
    }
    else {
        result = Py_NewRef(Py_None);
    }
done:
    Py_XDECREF(offsets);
    PyBuffer_Release(&view);
    return result;
}

/* -- StringDType -> bytes layouts ------------------------------------------ */

/* A growable byte buffer filled without the GIL (malloc, not Python's). */
typedef struct {
    unsigned char *buf;
    size_t len;
    size_t cap;
} Grow;

static int
grow_reserve(Grow *g, size_t more)
{
    if (g->cap - g->len >= more) {
        return 0;
    }
    size_t cap = g->cap ? g->cap : 4096;
    while (cap - g->len < more) {
        if (cap > SIZE_MAX / 2) {
            return -1;
        }
        cap *= 2;
    }
    unsigned char *p = realloc(g->buf, cap);
    if (p == NULL) {
        return -1;
    }
    g->buf = p;
    g->cap = cap;
    return 0;
}

/* Load every string of `arr` (C order; where `present` is given, only those
 * present) into `g`: interleaved (count header and length prefixes) or, with
 * `offsets`, joined with their end offsets written there. */
static int
gather_strings(PyArrayObject *arr, const npy_bool *present, int interleaved, int64_t *offsets, Grow *g, Err *e)
{
    npy_intp size = PyArray_SIZE(arr);
    Walk w;
    walk_init(&w, arr);
    npy_string_allocator *allocator = allocator_of(arr);
    int rc = 0;
    size_t count = 0;
    if (interleaved && grow_reserve(g, 4 + 4 * (size_t)size + 16 * (size_t)size) < 0) {
        rc = -2;
        goto done;
    }
    if (interleaved) {
        g->len = 4;
    }
    for (npy_intp k = 0; k < size; k++) {
        const npy_packed_static_string *slot = (const npy_packed_static_string *)walk_next(&w);
        if (present != NULL && !present[k]) {
            continue;
        }
        npy_static_string s = {0, NULL};
        int is_null = NpyString_load(allocator, slot, &s);
        if (is_null < 0) {
            rc = -2;
            goto done;
        }
        if (is_null) {
            *e = (Err){E_MISSING, k, 0};
            rc = -1;
            goto done;
        }
        if (interleaved && s.size > U32_MAX) {
            *e = (Err){E_TOO_LONG, k, (Py_ssize_t)s.size};
            rc = -1;
            goto done;
        }
        if (grow_reserve(g, s.size + 4) < 0) {
            rc = -2;
            goto done;
        }
        if (interleaved) {
            store_u32(g->buf + g->len, (uint32_t)s.size);
            g->len += 4;
        }
        if (s.size) {
            memcpy(g->buf + g->len, s.buf, s.size);
        }
        g->len += s.size;
        count++;
        if (offsets != NULL) {
            offsets[count] = (int64_t)g->len;
        }
    }
    if (interleaved) {
        if (count > U32_MAX) {
            *e = (Err){E_TOO_MANY, (Py_ssize_t)count, 0};
            rc = -1;
            goto done;
        }
        store_u32(g->buf, (uint32_t)count);
    }
done:
    NpyString_release_allocator(allocator);
    return rc;
}

static PyObject *
strings_to_bytes_layout(PyObject *arr_obj, PyObject *mask_obj, int interleaved)
{
    if (!is_string_array(arr_obj)) {
        PyErr_SetString(PyExc_TypeError, "expected a StringDType array");
        return NULL;
    }
    PyArrayObject *arr = (PyArrayObject *)arr_obj;
    PyArrayObject *mask = NULL;
    PyArrayObject *offsets = NULL;
    PyObject *result = NULL;
    const npy_bool *present = NULL;
    npy_intp size = PyArray_SIZE(arr);
    if (mask_obj != Py_None) {
        mask = (PyArrayObject *)PyArray_FROMANY(mask_obj, NPY_BOOL, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
        if (mask == NULL) {
            return NULL;
        }
        if (PyArray_SIZE(mask) != size) {
            PyErr_SetString(PyExc_ValueError, "mask must have one entry per element");
            goto done;
        }
        present = (const npy_bool *)PyArray_DATA(mask);
    }
    int64_t *o = NULL;
    if (!interleaved) {
        npy_intp count = size;
        if (present != NULL) {
            count = 0;
            for (npy_intp k = 0; k < size; k++) {
                count += present[k] != 0;
            }
        }
        npy_intp dims[1] = {count + 1};
        offsets = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT64);
        if (offsets == NULL) {
            goto done;
        }
        o = (int64_t *)PyArray_DATA(offsets);
        o[0] = 0;
    }
    Grow g = {NULL, 0, 0};
    Err e = {0, 0, 0};
    int rc;
    Py_BEGIN_ALLOW_THREADS;
    rc = gather_strings(arr, present, interleaved, o, &g, &e);
    Py_END_ALLOW_THREADS;
    if (rc == -2) {
        PyErr_NoMemory();
    }
    else if (rc == -1) {
        result = fail(e.code, e.index, e.value);
    }
    else {
        PyObject *data = PyBytes_FromStringAndSize((const char *)g.buf, (Py_ssize_t)g.len);
        if (data != NULL) {
            result = interleaved ? data : Py_BuildValue("(NN)", Py_NewRef((PyObject *)offsets), data);
        }
    }
    free(g.buf);
done:
    Py_XDECREF(mask);
    Py_XDECREF(offsets);
    return result;
}

static PyObject *
strings_to_interleaved(PyObject *self, PyObject *args)
{
    PyObject *arr, *mask;
    if (!PyArg_ParseTuple(args, "OO", &arr, &mask)) {
        return NULL;
    }
    return strings_to_bytes_layout(arr, mask, 1);
}

static PyObject *
strings_to_offsets(PyObject *self, PyObject *args)
{
    PyObject *arr, *mask;
    if (!PyArg_ParseTuple(args, "OO", &arr, &mask)) {
        return NULL;
    }
    return strings_to_bytes_layout(arr, mask, 0);
}

/* -- bytes objects ----------------------------------------------------------- */

/* A new flat object array of n elements (all None), or NULL. */
static PyArrayObject *
new_object_array(npy_intp n)
{
    npy_intp dims[1] = {n};
    return (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_OBJECT);
}

static PyObject *
interleaved_to_bytes(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t n;
    int allow_trailing;
    if (!PyArg_ParseTuple(args, "y*np", &view, &n, &allow_trailing)) {
        return NULL;
    }
    PyObject *result = NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t len = view.len;
    Err e = {0, 0, 0};
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "n must not be negative");
        goto done;
    }
    if (check_header(buf, len, n, &e) < 0) {
        result = fail(e.code, e.index, e.value);
        goto done;
    }
    PyArrayObject *out = new_object_array(n);
    if (out == NULL) {
        goto done;
    }
    PyObject **items = (PyObject **)PyArray_DATA(out);
    Py_ssize_t pos = 4;
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *data;
        Py_ssize_t nbytes;
        if (next_element(buf, len, &pos, i, n, &data, &nbytes, &e) < 0) {
            break;
        }
        PyObject *item = PyBytes_FromStringAndSize((const char *)data, nbytes);
        if (item == NULL) {
            Py_DECREF(out);
            goto done;
        }
        Py_XSETREF(items[i], item);
    }
    if (!e.code) {
        check_trailing(pos, len, allow_trailing, &e);
    }
    if (e.code) {
        Py_DECREF(out);
        result = fail(e.code, e.index, e.value);
    }
    else {
        result = (PyObject *)out;
    }
done:
    PyBuffer_Release(&view);
    return result;
}

static PyObject *
offsets_to_bytes(PyObject *self, PyObject *args)
{
    PyObject *offsets_obj;
    Py_buffer view;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Oy*n", &offsets_obj, &view, &n)) {
        return NULL;
    }
    PyObject *result = NULL;
    PyArrayObject *offsets = NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "n must not be negative");
        goto done;
    }
    offsets = offsets_array(offsets_obj, n);
    if (offsets == NULL) {
        goto done;
    }
    const int64_t *o = (const int64_t *)PyArray_DATA(offsets);
    Err e = {0, 0, 0};
    if (check_offsets(o, n, view.len, &e) < 0) {
        result = fail(e.code, e.index, e.value);
        goto done;
    }
    PyArrayObject *out = new_object_array(n);
    if (out == NULL) {
        goto done;
    }
    PyObject **items = (PyObject **)PyArray_DATA(out);
    const char *buf = (const char *)view.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyBytes_FromStringAndSize(buf + o[i], (Py_ssize_t)(o[i + 1] - o[i]));
        if (item == NULL) {
            Py_DECREF(out);
            goto done;
        }
        Py_XSETREF(items[i], item);
    }
    result = (PyObject *)out;
done:
    Py_XDECREF(offsets);
    PyBuffer_Release(&view);
    return result;
}

/* The bytes of one element: `bytes` (subclasses too) and, with any_buffer,
 * bytearray and memoryview (C-contiguous). 0 on success, -1 when the element
 * is not one of those; release with item_release. */
static int
item_get(PyObject *item, int any_buffer, Py_buffer *view)
{
    if (item != NULL && PyBytes_Check(item)) {
        view->obj = NULL;
        view->buf = PyBytes_AS_STRING(item);
        view->len = PyBytes_GET_SIZE(item);
        return 0;
    }
    if (item == NULL || !any_buffer || !(PyByteArray_Check(item) || PyMemoryView_Check(item))) {
        return -1;
    }
    if (PyObject_GetBuffer(item, view, PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

static void
item_release(Py_buffer *view)
{
    if (view->obj != NULL) {
        PyBuffer_Release(view);
    }
}

/* Object array of bytes (C order) -> interleaved bytes, or (offsets, data). */
static PyObject *
bytes_to_layout(PyObject *arr_obj, int interleaved)
{
    if (!is_object_array(arr_obj)) {
        PyErr_SetString(PyExc_TypeError, "expected an object array");
        return NULL;
    }
    PyArrayObject *arr = (PyArrayObject *)arr_obj;
    npy_intp n = PyArray_SIZE(arr);
    int any_buffer = !interleaved;
    if (interleaved && (uint64_t)n > U32_MAX) {
        return fail(E_TOO_MANY, n, 0);
    }
    PyArrayObject *offsets = NULL;
    int64_t *o = NULL;
    if (!interleaved) {
        npy_intp dims[1] = {n + 1};
        offsets = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT64);
        if (offsets == NULL) {
            return NULL;
        }
        o = (int64_t *)PyArray_DATA(offsets);
        o[0] = 0;
    }
    /* pass 1: types and total size */
    Walk w;
    walk_init(&w, arr);
    size_t total = interleaved ? 4 + 4 * (size_t)n : 0;
    for (npy_intp k = 0; k < n; k++) {
        PyObject *item;
        Py_buffer view;
        memcpy(&item, walk_next(&w), sizeof(item));
        if (item_get(item, any_buffer, &view) < 0) {
            Py_XDECREF(offsets);
            return fail(E_NOT_TYPE, k, 0);
        }
        size_t size = (size_t)view.len;
        item_release(&view);
        if (interleaved && size > U32_MAX) {
            Py_XDECREF(offsets);
            return fail(E_TOO_LONG, k, (Py_ssize_t)size);
        }
        total += size;
        if (o != NULL) {
            o[k + 1] = (int64_t)total;
        }
    }
    PyObject *data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (data == NULL) {
        Py_XDECREF(offsets);
        return NULL;
    }
    unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(data);
    size_t pos = 0;
    if (interleaved) {
        store_u32(dst, (uint32_t)n);
        pos = 4;
    }
    /* pass 2: the bytes (nothing ran Python code in between, so no element
     * changed; sizes are checked again all the same) */
    walk_init(&w, arr);
    for (npy_intp k = 0; k < n; k++) {
        PyObject *item;
        Py_buffer view;
        memcpy(&item, walk_next(&w), sizeof(item));
        int bad = item_get(item, any_buffer, &view) < 0;
        if (!bad && pos + (interleaved ? 4 : 0) + (size_t)view.len > total) {
            item_release(&view);
            bad = 1;
        }
        if (bad) {
            Py_DECREF(data);
            Py_XDECREF(offsets);
            PyErr_SetString(PyExc_RuntimeError, "an element changed while it was being encoded");
            return NULL;
        }
        size_t size = (size_t)view.len;
        if (interleaved) {
            store_u32(dst + pos, (uint32_t)size);
            pos += 4;
        }
        memcpy(dst + pos, view.buf, size);
        item_release(&view);
        pos += size;
    }
    if (interleaved) {
        return data;
    }
    return Py_BuildValue("(NN)", (PyObject *)offsets, data);
}

static PyObject *
bytes_to_interleaved(PyObject *self, PyObject *arr)
{
    return bytes_to_layout(arr, 1);
}

static PyObject *
bytes_to_offsets(PyObject *self, PyObject *arr)
{
    return bytes_to_layout(arr, 0);
}

/* -- interleaved <-> offsets --------------------------------------------------- */

static PyObject *
interleaved_to_offsets(PyObject *self, PyObject *args)
{
    Py_buffer view;
    Py_ssize_t n;
    int allow_trailing;
    if (!PyArg_ParseTuple(args, "y*np", &view, &n, &allow_trailing)) {
        return NULL;
    }
    PyObject *result = NULL, *data = NULL;
    PyArrayObject *offsets = NULL;
    const unsigned char *buf = (const unsigned char *)view.buf;
    Py_ssize_t len = view.len;
    Err e = {0, 0, 0};
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "n must not be negative");
        goto done;
    }
    if (check_header(buf, len, n, &e) < 0) {
        result = fail(e.code, e.index, e.value);
        goto done;
    }
    npy_intp dims[1] = {n + 1};
    offsets = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_INT64);
    if (offsets == NULL) {
        goto done;
    }
    int64_t *o = (int64_t *)PyArray_DATA(offsets);
    o[0] = 0;
    Py_ssize_t pos = 4;
    NPY_BEGIN_THREADS_DEF;
    NPY_BEGIN_THREADS;
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *d;
        Py_ssize_t nbytes;
        if (next_element(buf, len, &pos, i, n, &d, &nbytes, &e) < 0) {
            break;
        }
        o[i + 1] = o[i] + nbytes;
    }
    if (!e.code) {
        check_trailing(pos, len, allow_trailing, &e);
    }
    NPY_END_THREADS;
    if (e.code) {
        result = fail(e.code, e.index, e.value);
        goto done;
    }
    data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)o[n]);
    if (data == NULL) {
        goto done;
    }
    unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(data);
    NPY_BEGIN_THREADS;
    pos = 4;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t nbytes = (size_t)(o[i + 1] - o[i]);
        memcpy(dst + o[i], buf + pos + 4, nbytes);
        pos += 4 + (Py_ssize_t)nbytes;
    }
    NPY_END_THREADS;
    result = Py_BuildValue("(OO)", (PyObject *)offsets, data);
done:
    Py_XDECREF(offsets);
    Py_XDECREF(data);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *
offsets_to_interleaved(PyObject *self, PyObject *args)
{
    PyObject *offsets_obj;
    Py_buffer view;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "Oy*n", &offsets_obj, &view, &n)) {
        return NULL;
    }
    PyObject *result = NULL;
    PyArrayObject *offsets = NULL;
    Err e = {0, 0, 0};
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "n must not be negative");
        goto done;
    }
    if ((uint64_t)n > U32_MAX) {
        result = fail(E_TOO_MANY, n, 0);
        goto done;
    }
    offsets = offsets_array(offsets_obj, n);
    if (offsets == NULL) {
        goto done;
    }
    const int64_t *o = (const int64_t *)PyArray_DATA(offsets);
    /* order: a bad start or a decrease, then an element too long for its
     * u32 prefix, then offsets past the data (so "too long" is told even when
     * the data was never there to be copied) */
    if (o[0] < 0 || o[0] > view.len) {
        result = fail(E_OFFSETS, 0, (Py_ssize_t)o[0]);
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (o[i + 1] < o[i]) {
            result = fail(E_OFFSETS, i + 1, (Py_ssize_t)o[i + 1]);
            goto done;
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t length = (uint64_t)o[i + 1] - (uint64_t)o[i]; /* exact: o does not decrease */
        if (length > U32_MAX) {
            result = fail(E_TOO_LONG, i, (Py_ssize_t)(length > (uint64_t)PY_SSIZE_T_MAX ? PY_SSIZE_T_MAX : length));
            goto done;
        }
    }
    if (check_offsets(o, n, view.len, &e) < 0) {
        result = fail(e.code, e.index, e.value);
        goto done;
    }
    size_t total = 4 + 4 * (size_t)n + (size_t)(o[n] - o[0]);
    PyObject *data = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (data == NULL) {
        goto done;
    }
    unsigned char *dst = (unsigned char *)PyBytes_AS_STRING(data);
    const unsigned char *src = (const unsigned char *)view.buf;
    NPY_BEGIN_THREADS_DEF;
    NPY_BEGIN_THREADS;
    store_u32(dst, (uint32_t)n);
    size_t pos = 4;
    for (Py_ssize_t i = 0; i < n; i++) {
        size_t nbytes = (size_t)(o[i + 1] - o[i]);
        store_u32(dst + pos, (uint32_t)nbytes);
        memcpy(dst + pos + 4, src + o[i], nbytes);
        pos += 4 + nbytes;
    }
    NPY_END_THREADS;
    result = data;
done:
    Py_XDECREF(offsets);
    PyBuffer_Release(&view);
    return result;
}

/* -- StringDType with missing values -> plain strings and a mask ------------------ */

static PyObject *
split_missing(PyObject *self, PyObject *args)
{
    PyObject *src_obj, *dst_obj;
    if (!PyArg_ParseTuple(args, "OO", &src_obj, &dst_obj)) {
        return NULL;
    }
    if (!is_string_array(src_obj) || !is_string_array(dst_obj) || !PyArray_ISWRITEABLE((PyArrayObject *)dst_obj)
        || PyArray_SIZE((PyArrayObject *)src_obj) != PyArray_SIZE((PyArrayObject *)dst_obj) || src_obj == dst_obj) {
        PyErr_SetString(PyExc_TypeError, "expected two StringDType arrays of one size, the second writable");
        return NULL;
    }
    PyArrayObject *src = (PyArrayObject *)src_obj, *dst = (PyArrayObject *)dst_obj;
    npy_intp n = PyArray_SIZE(src);
    npy_intp dims[1] = {n};
    PyArrayObject *present = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_BOOL);
    if (present == NULL) {
        return NULL;
    }
    npy_bool *p = (npy_bool *)PyArray_DATA(present);
    int nomem = 0;
    Walk ws, wd;
    walk_init(&ws, src);
    walk_init(&wd, dst);
    PyArray_Descr *descrs[2] = {PyArray_DESCR(src), PyArray_DESCR(dst)};
    npy_string_allocator *allocators[2] = {NULL, NULL};
    NPY_BEGIN_THREADS_DEF;
    NPY_BEGIN_THREADS;
    NpyString_acquire_allocators(2, descrs, allocators);
    for (npy_intp k = 0; k < n; k++) {
        const npy_packed_static_string *from = (const npy_packed_static_string *)walk_next(&ws);
        npy_packed_static_string *to = (npy_packed_static_string *)walk_next(&wd);
        npy_static_string s = {0, NULL};
        int is_null = NpyString_load(allocators[0], from, &s);
        if (is_null < 0) {
            nomem = 1;
            break;
        }
        p[k] = !is_null;
        if (is_null) {
            s.size = 0;
            s.buf = "";
        }
        if (NpyString_pack(allocators[1], to, s.buf, s.size) < 0) {
            nomem = 1;
            break;
        }
    }
    NpyString_release_allocators(2, allocators);
    NPY_END_THREADS;
    if (nomem) {
        Py_DECREF(present);
        return PyErr_NoMemory();
    }
    return (PyObject *)present;
}

/* -- which strings are not empty (the flags of paired reads) ---------------------- */

static PyObject *
nonempty(PyObject *self, PyObject *arr_obj)
{
    if (!is_string_array(arr_obj)) {
        PyErr_SetString(PyExc_TypeError, "expected a StringDType array");
        return NULL;
    }
    PyArrayObject *arr = (PyArrayObject *)arr_obj;
    npy_intp n = PyArray_SIZE(arr);
    npy_intp dims[1] = {n};
    PyArrayObject *result = (PyArrayObject *)PyArray_SimpleNew(1, dims, NPY_BOOL);
    if (result == NULL) {
        return NULL;
    }
    npy_bool *r = (npy_bool *)PyArray_DATA(result);
    int nomem = 0;
    Walk w;
    walk_init(&w, arr);
    NPY_BEGIN_THREADS_DEF;
    NPY_BEGIN_THREADS;
    npy_string_allocator *allocator = allocator_of(arr);
    for (npy_intp k = 0; k < n; k++) {
        npy_static_string s = {0, NULL};
        int is_null = NpyString_load(allocator, (const npy_packed_static_string *)walk_next(&w), &s);
        if (is_null < 0) {
            nomem = 1;
            break;
        }
        r[k] = !is_null && s.size > 0;
    }
    NpyString_release_allocator(allocator);
    NPY_END_THREADS;
    if (nomem) {
        Py_DECREF(result);
        return PyErr_NoMemory();
    }
    return (PyObject *)result;
}

static PyMethodDef methods[] = {
    {"nonempty", nonempty, METH_O, "nonempty(arr) -> bool array: which strings are not empty (C order)"},
    {"interleaved_to_strings", interleaved_to_strings, METH_VARARGS,
     "interleaved_to_strings(buf, out, mask, allow_trailing, has_na, flags=None): fill StringDType `out`"},
    {"offsets_to_strings", offsets_to_strings, METH_VARARGS,
     "offsets_to_strings(offsets, data, out): fill StringDType `out`"},
    {"strings_to_interleaved", strings_to_interleaved, METH_VARARGS,
     "strings_to_interleaved(arr, mask) -> bytes"},
    {"strings_to_offsets", strings_to_offsets, METH_VARARGS,
     "strings_to_offsets(arr, mask) -> (offsets, data)"},
    {"interleaved_to_bytes", interleaved_to_bytes, METH_VARARGS,
     "interleaved_to_bytes(buf, n, allow_trailing) -> object array of bytes"},
    {"offsets_to_bytes", offsets_to_bytes, METH_VARARGS,
     "offsets_to_bytes(offsets, data, n) -> object array of bytes"},
    {"bytes_to_interleaved", bytes_to_interleaved, METH_O, "bytes_to_interleaved(objects) -> bytes"},
    {"bytes_to_offsets", bytes_to_offsets, METH_O, "bytes_to_offsets(objects) -> (offsets, data)"},
    {"interleaved_to_offsets", interleaved_to_offsets, METH_VARARGS,
     "interleaved_to_offsets(buf, n, allow_trailing) -> (offsets, data)"},
    {"offsets_to_interleaved", offsets_to_interleaved, METH_VARARGS,
     "offsets_to_interleaved(offsets, data, n) -> bytes"},
    {"split_missing", split_missing, METH_VARARGS,
     "split_missing(src, dst) -> present: copy strings, missing ones as ''"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cstrings",
    "Variable-length element layouts <-> numpy arrays (compiled; see zarrpy.core.vlen_kernels).", -1, methods,
};

PyMODINIT_FUNC
PyInit__cstrings(void)
{
    import_array();
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) {
        return NULL;
    }
    struct {
        const char *name;
        int value;
    } codes[] = {
        {"E_SHORT", E_SHORT}, {"E_COUNT", E_COUNT}, {"E_TRUNCATED", E_TRUNCATED},
        {"E_PREFIX_PAST", E_PREFIX_PAST}, {"E_DATA_PAST", E_DATA_PAST}, {"E_UTF8", E_UTF8},
        {"E_TRAILING", E_TRAILING}, {"E_TOO_MANY", E_TOO_MANY}, {"E_TOO_LONG", E_TOO_LONG},
        {"E_NOT_TYPE", E_NOT_TYPE}, {"E_MISSING", E_MISSING}, {"E_OFFSETS", E_OFFSETS},
    };
    for (size_t k = 0; k < sizeof(codes) / sizeof(codes[0]); k++) {
        if (PyModule_AddIntConstant(m, codes[k].name, codes[k].value) < 0) {
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
