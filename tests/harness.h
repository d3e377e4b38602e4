/* harness.h — what the workbench's tests share, the headless session
 * tests (test-session.c) and the window tests under Xvfb (test-gui-*.c):
 * running the main loop until a condition holds, the jobs in flight, and
 * the files they make (synthetic IDX images, labelled texts, a fake MNIST
 * folder). Plain GLib; each helper fails the running cmocka test. */
#pragma once

#include <glib.h>

typedef gboolean (*Condition) (gpointer data);

/* Runs the default main context until cond holds or timeout seconds pass
 * (a guard against a hang, not a measure: no test asserts time). */
gboolean iterate_until (Condition cond, gpointer data, double timeout);
gboolean always_false (gpointer data);
/* No worker job of any session is under way. */
gboolean no_jobs (gpointer data);

/* Gaps between the ticks of a 5 ms timeout: how long the main loop was
 * held (printed, never asserted). */
typedef struct {
  gint64 last;
  gint64 max_gap;
  GArray *gaps;       /* gint64 µs between ticks */
} Stall;
gboolean on_stall_tick (gpointer data);

void  write_be32 (GByteArray *b, guint32 v);
/* n synthetic 28×28 "digits": a bright bar whose place depends on the
 * label, on a black background. */
void  write_idx_pair (const char *images_path, const char *labels_path, int n, guint seed);
/* n lines "text<TAB>label": "the movie is good" (1) or "… bad" (0) plus
 * three of 40 filler words, so 45 words are seen ≥ 20 times in 400. */
void  write_text_tsv (const char *path, int n);
/* words.json beside a train.tsv and a test.tsv in dir (new path). */
char *write_words_experiment (const char *dir, const char *data_extra, const char *layers,
                              int steps);
void  remove_words_experiment (const char *dir);
/* A fetched-looking MNIST in dir/mnist, $CAML_DATA_DIR pointed at dir;
 * returns the former $CAML_DATA_DIR for remove_fake_mnist. */
char *write_fake_mnist (const char *dir, char *idx[4]);
void  remove_fake_mnist (const char *dir, char *idx[4], char *saved_dir);
void  remove_tree (const char *dir);
