/* One pass over a str that removes the invisible characters no context can make legitimate,
 * counted per channel (issue 37's scanner; `_scan.py` builds its table and reads its answer).
 *
 * The table maps every code point to what the pass does with it, in two levels: byte
 * `cp >> 8` of the first 0x1100 bytes names a block of 256 bytes after them, and that block's
 * byte `cp & 0xFF` says:
 *
 *   0                  an ordinary character: copied;
 *   1-63               a character of that channel to strip: removed and counted;
 *   FLAG | 1-63        a character of that channel to flag: copied and counted;
 *   BAIL and above     a character the Python walk judges by its context (a joiner, a
 *                      selector, a mark, a flag's base): the pass gives up and returns None.
 *
 * The answer is None, or the cleaned str (the very object passed in when nothing was removed)
 * and the (channel, count) pairs in the order each channel first showed. Every PEP 393 kind
 * is read; the result is built in the canonical kind of what was kept (a str whose kind is
 * wider than its widest character would compare unequal to the same text).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define FIRST_LEVEL 0x1100
#define TABLE_SIZE (FIRST_LEVEL + 256 * 256)
#define FLAG 0x40
#define BAIL 0x80
#define CHANNELS 64

typedef struct {
    Py_ssize_t counts[CHANNELS];
    unsigned char order[CHANNELS];
    int seen;
    Py_ssize_t kept;
    Py_UCS4 widest;
} Tally;

static inline unsigned char
action_of(const unsigned char *table, Py_UCS4 code)
{
    unsigned char block = table[code >> 8];
    return block ? table[FIRST_LEVEL + ((size_t)block << 8) + (code & 0xFF)] : 0;
}

static inline void
count(Tally *tally, unsigned char channel, Py_ssize_t how_many)
{
    if (tally->counts[channel] == 0) {
        tally->order[tally->seen++] = channel;
    }
    tally->counts[channel] += how_many;
}

/* The pass for one kind: 0 done (with `out` filled from the first removal on, or NULL when
 * nothing was removed), 1 a character needs the walk, -1 out of memory. The ordinary
 * characters between two actions are copied as one run. `tally->widest` is the OR of the
 * kept characters: it falls in the same kind as their maximum, which is all a str needs. */
#define DEFINE_PASS(NAME, CHAR)                                                              \
    static int NAME(const CHAR *text, Py_ssize_t length, const unsigned char *table,        \
                    Tally *tally, CHAR **out)                                                \
    {                                                                                        \
        CHAR *kept = NULL;                                                                   \
        Py_ssize_t index = 0, start, written = 0;                                            \
        Py_UCS4 widest = 0;                                                                  \
        unsigned char action = 0;                                                            \
        while (index < length) {                                                             \
            for (start = index; index < length; index++) {                                  \
                action = action_of(table, text[index]);                                      \
                if (action != 0) {                                                           \
                    break;                                                                   \
                }                                                                            \
                widest |= text[index];                                                       \
            }                                                                                \
            if (kept != NULL) {                                                              \
                memcpy(kept + written, text + start, (size_t)(index - start) * sizeof(CHAR)); \
                written += index - start;                                                    \
            }                                                                                \
            if (index == length) {                                                           \
                break;                                                                       \
            }                                                                                \
            if (action & BAIL) {                                                             \
                PyMem_Free(kept);                                                            \
                return 1;                                                                    \
            }                                                                                \
            if (action & FLAG) {                                                             \
                /* Counted, and kept. */                                                     \
                count(tally, action & (FLAG - 1), 1);                                        \
                widest |= text[index];                                                       \
                if (kept != NULL) {                                                          \
                    kept[written++] = text[index];                                           \
                }                                                                            \
                index++;                                                                     \
                continue;                                                                    \
            }                                                                                \
            if (kept == NULL) {                                                              \
                kept = PyMem_Malloc((size_t)length * sizeof(CHAR));                          \
                if (kept == NULL) {                                                          \
                    return -1;                                                               \
                }                                                                            \
                memcpy(kept, text, (size_t)index * sizeof(CHAR));                            \
                written = index;                                                             \
            }                                                                                \
            /* A run of one channel's characters (a smuggled message) goes at once. */      \
            for (start = index++; index < length; index++) {                                \
                if (action_of(table, text[index]) != action) {                               \
                    break;                                                                   \
                }                                                                            \
            }                                                                                \
            count(tally, action, index - start);                                             \
        }                                                                                    \
        tally->kept = kept != NULL ? written : length;                                       \
        tally->widest = widest > 0x10FFFF ? 0x10FFFF : widest;                               \
        *out = kept;                                                                         \
        return 0;                                                                            \
    }

DEFINE_PASS(pass_ucs1, Py_UCS1)
DEFINE_PASS(pass_ucs2, Py_UCS2)
DEFINE_PASS(pass_ucs4, Py_UCS4)

#define DEFINE_NARROW(NAME, FROM, TO)                                                        \
    static void NAME(const FROM *from, TO *to, Py_ssize_t length)                           \
    {                                                                                        \
        Py_ssize_t index;                                                                    \
        for (index = 0; index < length; index++) {                                          \
            to[index] = (TO)from[index];                                                     \
        }                                                                                    \
    }

DEFINE_NARROW(narrow_4_to_2, Py_UCS4, Py_UCS2)
DEFINE_NARROW(narrow_4_to_1, Py_UCS4, Py_UCS1)
DEFINE_NARROW(narrow_2_to_1, Py_UCS2, Py_UCS1)

/* A str of `length` characters read from `data` (of `kind`), of the kind `widest` needs
 * (never wider than `kind`). */
static PyObject *
canonical(int kind, const void *data, Py_ssize_t length, Py_UCS4 widest)
{
    PyObject *result = PyUnicode_New(length, widest);
    void *into;
    if (result == NULL) {
        return NULL;
    }
    into = PyUnicode_DATA(result);
    if (PyUnicode_KIND(result) == kind) {
        memcpy(into, data, (size_t)length * (size_t)kind);
    }
    else if (kind == PyUnicode_4BYTE_KIND && PyUnicode_KIND(result) == PyUnicode_2BYTE_KIND) {
        narrow_4_to_2(data, into, length);
    }
    else if (kind == PyUnicode_4BYTE_KIND) {
        narrow_4_to_1(data, into, length);
    }
    else {
        narrow_2_to_1(data, into, length);
    }
    return result;
}

static PyObject *
answer(PyObject *text, PyObject *cleaned, const Tally *tally)
{
    PyObject *counts = PyTuple_New(tally->seen), *result;
    int index;
    if (counts == NULL) {
        Py_XDECREF(cleaned);
        return NULL;
    }
    for (index = 0; index < tally->seen; index++) {
        unsigned char channel = tally->order[index];
        PyObject *pair = Py_BuildValue("(in)", (int)channel, tally->counts[channel]);
        if (pair == NULL) {
            Py_DECREF(counts);
            Py_XDECREF(cleaned);
            return NULL;
        }
        PyTuple_SET_ITEM(counts, index, pair);
    }
    if (cleaned == NULL) {
        cleaned = Py_NewRef(text);
    }
    result = PyTuple_Pack(2, cleaned, counts);
    Py_DECREF(cleaned);
    Py_DECREF(counts);
    return result;
}

static PyObject *
scan(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *text, *cleaned = NULL;
    Py_buffer table;
    Tally tally;
    void *kept = NULL;
    int kind, status;
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "scan() takes a str and a table");
        return NULL;
    }
    text = args[0];
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "scan() needs a str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0) {
        return NULL;
    }
#endif
    if (PyObject_GetBuffer(args[1], &table, PyBUF_SIMPLE) < 0) {
        return NULL;
    }
    if (table.len != TABLE_SIZE) {
        PyBuffer_Release(&table);
        PyErr_Format(PyExc_ValueError, "the table must be %d bytes", TABLE_SIZE);
        return NULL;
    }
    memset(&tally, 0, sizeof tally);
    kind = PyUnicode_KIND(text);
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        status = pass_ucs1(PyUnicode_1BYTE_DATA(text), PyUnicode_GET_LENGTH(text), table.buf,
                           &tally, (Py_UCS1 **)&kept);
        break;
    case PyUnicode_2BYTE_KIND:
        status = pass_ucs2(PyUnicode_2BYTE_DATA(text), PyUnicode_GET_LENGTH(text), table.buf,
                           &tally, (Py_UCS2 **)&kept);
        break;
    default:
        status = pass_ucs4(PyUnicode_4BYTE_DATA(text), PyUnicode_GET_LENGTH(text), table.buf,
                           &tally, (Py_UCS4 **)&kept);
        break;
    }
    PyBuffer_Release(&table);
    if (status < 0) {
        return PyErr_NoMemory();
    }
    if (status > 0) {
        Py_RETURN_NONE;
    }
    if (kept != NULL) {
        cleaned = canonical(kind, kept, tally.kept, tally.widest);
        PyMem_Free(kept);
        if (cleaned == NULL) {
            return NULL;
        }
    }
    return answer(text, cleaned, &tally);
}

static PyMethodDef methods[] = {
    {"scan", (PyCFunction)(void (*)(void))scan, METH_FASTCALL,
     "scan(text, table, /) -> (cleaned, ((channel, count), ...)) | None"},
    {NULL, NULL, 0, NULL},
};

static PyModuleDef_Slot slots[] = {
#ifdef Py_mod_multiple_interpreters
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
#ifdef Py_mod_gil
    {Py_mod_gil, Py_MOD_GIL_NOT_USED},
#endif
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_scanner",
    .m_doc = "The sanitizer's one-pass scanner for invisible characters (see _scan.py).",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC
PyInit__scanner(void)
{
    return PyModuleDef_Init(&module_def);
}
