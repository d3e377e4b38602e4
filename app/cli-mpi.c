/* cli-mpi.c — `caml` on several ranks: MPI started only when an MPI
 * launcher started the process, the ranks, the sums that data-parallel
 * training (caml_trainer_set_replica) and CA-SEM's shards
 * (caml_sem_new_shard) need, the corpus words each rank counted, and a work
 * queue. The engine knows nothing of MPI: the trainer calls
 * caml_cli_mpi_reduce from its thread, the only MPI calls while it runs
 * (MPI_THREAD_SERIALIZED). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

#include "cli-common.h"
#include "cli-mpi.h"

static gboolean speaking = TRUE;

void
caml_cli_mpi_speak (gboolean speak)
{
  speaking = speak;
}

/* Allreduce calls, the bytes each rank gave them and their time. */
static struct {
  long   calls;
  double bytes, seconds;
} reduced;

/* The work queue of one rank: each item in turn. */
static void
share_alone (int n_items, CamlCliMpiBegin begin, CamlCliMpiWork work, CamlCliMpiDone done,
             gpointer data)
{
  for (int item = 0; item < n_items && caml_cli_signal_heard () == 0; item++)
    {
      begin (item, 0, data);
      g_autoptr (GBytes) result = work (item, data);
      if (!done (item, 0, result, data))
        break;
    }
}

#ifdef CAML_HAVE_MPI
#include <mpi.h>

/* what a silent rank would have said last: said if it ends the job */
static GString *unsaid;
/* every rank is past a caml_cli_mpi_ready: none waits for another to start */
static gboolean agreed;

static void
print_if_speaking (const char *string)
{
  if (speaking)
    fputs (string, stderr);
  else
    {
      if (unsaid == NULL)
        unsaid = g_string_new (NULL);
      g_string_assign (unsaid, string);
    }
}

static gboolean started;
static int rank, size = 1, local_size = 1;

/* Open MPI's mpirun, Hydra (MPICH) and Slurm's PMI/PMIx set these. */
static gboolean
launched_by_mpi (void)
{
  return g_getenv ("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv ("PMI_SIZE") != NULL
         || g_getenv ("PMIX_RANK") != NULL;
}

static void
set_mpi_error (GError **error, const char *what, int code)
{
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string (code, text, &len) != MPI_SUCCESS)
    g_snprintf (text, sizeof text, "error %d", code);
  g_set_error (error, CAML_ERROR, CAML_ERROR_IO, "%s: %s", what, text);
}

/* An exit() that main does not see (GOption's --help) still finalizes. */
static void
finalize_at_exit (void)
{
  if (started)
    {
      started = FALSE;
      MPI_Finalize ();
    }
}

/* Open MPI picks UCX for its point-to-point layer where UCX is installed,
 * and starting UCX costs a job ~0.23 s of probing network devices (0.48
 * against 0.25 s for `mpirun -np 2 caml version` here). When every rank of
 * the job runs on this node, shared memory is all it needs, and the ob1
 * layer gives it at once; a choice the user made (OMPI_MCA_pml, set by
 * `--mca pml` too) stands. */
static void
prefer_shared_memory_on_one_node (void)
{
  const char *world = g_getenv ("OMPI_COMM_WORLD_SIZE");
  const char *local = g_getenv ("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (world != NULL && local != NULL && strcmp (world, local) == 0
      && g_getenv ("OMPI_MCA_pml") == NULL)
    g_setenv ("OMPI_MCA_pml", "ob1", FALSE);
}

gboolean
caml_cli_mpi_init (int *argc, char ***argv, GError **error)
{
  if (!launched_by_mpi ())
    return TRUE;
  prefer_shared_memory_on_one_node ();
  int provided = 0;
  int code = MPI_Init_thread (argc, argv, MPI_THREAD_SERIALIZED, &provided);
  if (code != MPI_SUCCESS)
    {
      set_mpi_error (error, "MPI_Init_thread", code);
      return FALSE;
    }
  started = TRUE;
  atexit (finalize_at_exit);
  if (provided < MPI_THREAD_SERIALIZED)
    {
      g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                   "this MPI library cannot be called from the training thread "
                   "(it provides thread level %d, caml needs MPI_THREAD_SERIALIZED)", provided);
      return FALSE;
    }
  /* a failed call returns to us, which then ends the job with a message */
  MPI_Comm_set_errhandler (MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank (MPI_COMM_WORLD, &rank);
  MPI_Comm_size (MPI_COMM_WORLD, &size);
  if (rank > 0)
    {
      speaking = FALSE;
      g_set_printerr_handler (print_if_speaking);
    }
  MPI_Comm local;
  if (MPI_Comm_split_type (MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                           &local) == MPI_SUCCESS)
    {
      MPI_Comm_size (local, &local_size);
      MPI_Comm_free (&local);
    }
  return TRUE;
}

void
caml_cli_mpi_finalize (int status)
{
  /* a rank that fails before the ranks agreed to start may leave the
   * others waiting for it in a collective: it ends them */
  if (started && size > 1 && status != 0 && !agreed)
    caml_cli_mpi_abort (status);
  if (started)
    MPI_Finalize ();
  started = FALSE;
}

void
caml_cli_mpi_abort (int status)
{
  if (!speaking && unsaid != NULL)
    fprintf (stderr, "[rank %d] %s", caml_cli_mpi_rank (), unsaid->str);
  if (started)
    MPI_Abort (MPI_COMM_WORLD, status);
  exit (status);
}

char *
caml_cli_mpi_library (void)
{
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len = 0;
  if (MPI_Get_library_version (text, &len) != MPI_SUCCESS)
    return g_strdup ("MPI");
  /* "Open MPI v4.1.4, package: …": the name and version */
  char *comma = strchr (text, ',');
  if (comma != NULL)
    *comma = '\0';
  return g_strdup (g_strstrip (text));
}

int
caml_cli_mpi_rank (void)
{
  return rank;
}

int
caml_cli_mpi_size (void)
{
  return size;
}

int
caml_cli_mpi_local_size (void)
{
  return local_size;
}

/* In place, in pieces an int can count. */
static int
allreduce (void *buf, size_t count, MPI_Datatype type, size_t item, MPI_Op op)
{
  char *at = buf;
  while (count > 0)
    {
      int n = (int) MIN (count, (size_t) INT_MAX / 4);
      int code = MPI_Allreduce (MPI_IN_PLACE, at, n, type, op, MPI_COMM_WORLD);
      if (code != MPI_SUCCESS)
        return code;
      at += (size_t) n * item;
      count -= (size_t) n;
    }
  return MPI_SUCCESS;
}

gboolean
caml_cli_mpi_reduce (CamlReplicaSums *s, gpointer user_data, GError **error)
{
  gint64 start = g_get_monotonic_time ();
  int code = allreduce (s->grad, s->n_grad, MPI_FLOAT, sizeof (float), MPI_SUM);
  if (code == MPI_SUCCESS)
    code = allreduce (s->sums, (size_t) s->n_sums, MPI_DOUBLE, sizeof (double), MPI_SUM);
  if (code == MPI_SUCCESS && s->marks != NULL)
    code = allreduce (s->marks, s->n_marks, MPI_UNSIGNED_CHAR, 1, MPI_BOR);
  if (code != MPI_SUCCESS)
    {
      set_mpi_error (error, "MPI_Allreduce", code);
      return FALSE;
    }
  reduced.calls++;
  reduced.bytes += s->n_grad * sizeof (float) + (size_t) s->n_sums * sizeof (double)
                   + (s->marks != NULL ? s->n_marks : 0);
  reduced.seconds += (g_get_monotonic_time () - start) / 1e6;
  return TRUE;
}

gboolean
caml_cli_mpi_sum (double *values, gsize n, gpointer user_data, GError **error)
{
  gint64 start = g_get_monotonic_time ();
  int code = allreduce (values, n, MPI_DOUBLE, sizeof (double), MPI_SUM);
  if (code != MPI_SUCCESS)
    {
      set_mpi_error (error, "MPI_Allreduce", code);
      return FALSE;
    }
  reduced.calls++;
  reduced.bytes += n * sizeof (double);
  reduced.seconds += (g_get_monotonic_time () - start) / 1e6;
  return TRUE;
}

/* Each rank's bytes in turn from it to all: its length, then the bytes in
 * pieces an int can count. */
GPtrArray *
caml_cli_mpi_gather (GBytes *mine, GError **error)
{
  GPtrArray *all = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  for (int root = 0; root < size; root++)
    {
      guint64 length = root == rank ? g_bytes_get_size (mine) : 0;
      int code = MPI_Bcast (&length, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
      if (code == MPI_SUCCESS && root == rank)
        g_ptr_array_add (all, g_bytes_ref (mine));
      if (code == MPI_SUCCESS)
        {
          char *data = root == rank ? (char *) g_bytes_get_data (mine, NULL)
                                    : g_malloc (length);
          for (guint64 at = 0; at < length && code == MPI_SUCCESS; )
            {
              int n = (int) MIN (length - at, (guint64) INT_MAX / 4);
              code = MPI_Bcast (data + at, n, MPI_BYTE, root, MPI_COMM_WORLD);
              at += (guint64) n;
            }
          if (root != rank)
            g_ptr_array_add (all, g_bytes_new_take (data, length));
        }
      if (code != MPI_SUCCESS)
        {
          set_mpi_error (error, "MPI_Bcast", code);
          g_ptr_array_unref (all);
          return NULL;
        }
    }
  return all;
}

gboolean
caml_cli_mpi_ready (const char *problem)
{
  if (size <= 1)
    return problem == NULL;
  int mine = problem == NULL, first = mine, all = 0;
  if (MPI_Allreduce (&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS
      || MPI_Bcast (&first, 1, MPI_INT, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
    {
      g_printerr ("%s: the ranks could not agree to start\n", g_get_prgname ());
      caml_cli_mpi_abort (1);
    }
  agreed = TRUE;
  /* the first rank said its own; another's is said when the first's is not */
  if (!mine && first && rank > 0)
    {
      caml_cli_mpi_speak (TRUE);
      g_printerr ("%s: %s\n", g_get_prgname (), problem);
      caml_cli_mpi_speak (FALSE);
    }
  return all == 1;
}

/* The work queue (caml_cli_mpi_share) on several ranks. Messages to the
 * first rank: the item a rank has worked (-1 when it asks for its first)
 * and its result; answers: the next item, or -1: no more. */
enum { TAG_ASK = 7301, TAG_ITEM };

typedef struct {
  int n_items, next, size;
  gboolean stopped;   /* done said no more */
  CamlCliMpiBegin begin;
  CamlCliMpiDone done;
  gpointer data;
  /* the first rank's own share, worked on the calling thread */
  GMutex lock;
  GCond cond;
  gboolean asks, answered;
  int worked;          /* what it worked, or -1 */
  GBytes *result;
  int item;            /* the answer */
} Queue;

static G_NORETURN void
queue_failed (const char *what, int code)
{
  g_autoptr (GError) error = NULL;
  set_mpi_error (&error, what, code);
  caml_cli_mpi_speak (TRUE);
  g_printerr ("%s: %s: ending the job\n", g_get_prgname (), error->message);
  caml_cli_mpi_abort (1);
}

static int
hand_out (Queue *q, int to)
{
  if (q->stopped || q->next >= q->n_items || caml_cli_signal_heard () != 0)
    return -1;
  int item = q->next++;
  q->begin (item, to, q->data);
  return item;
}

static void
take_result (Queue *q, int item, int from, GBytes *result)
{
  if (item >= 0 && !q->done (item, from, result, q->data))
    q->stopped = TRUE;
}

/* The first rank's thread that hands out the items and takes the results:
 * it polls (every millisecond) rather than block in MPI, which spins. */
static gpointer
coordinate (gpointer data)
{
  Queue *q = data;
  int remote = q->size - 1;
  gboolean local = TRUE;
  g_mutex_lock (&q->lock);
  while (remote > 0 || local)
    {
      gboolean idle = TRUE;
      if (q->asks)
        {
          take_result (q, q->worked, 0, q->result);
          g_clear_pointer (&q->result, g_bytes_unref);
          q->item = hand_out (q, 0);
          local = q->item >= 0;
          q->asks = FALSE;
          q->answered = TRUE;
          g_cond_broadcast (&q->cond);
          idle = FALSE;
        }
      if (remote > 0)
        {
          int flag = 0, code, count = 0;
          MPI_Status st;
          if ((code = MPI_Iprobe (MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &flag, &st)) != MPI_SUCCESS)
            queue_failed ("MPI_Iprobe", code);
          if (flag)
            {
              MPI_Get_count (&st, MPI_BYTE, &count);
              char *message = g_malloc (MAX (count, 1));
              if ((code = MPI_Recv (message, count, MPI_BYTE, st.MPI_SOURCE, TAG_ASK,
                                    MPI_COMM_WORLD, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                queue_failed ("MPI_Recv", code);
              gint32 worked;
              memcpy (&worked, message, sizeof worked);
              g_autoptr (GBytes) result = g_bytes_new_take (message, count);
              g_autoptr (GBytes) payload = g_bytes_new_from_bytes (result, sizeof worked,
                                                                   count - sizeof worked);
              g_mutex_unlock (&q->lock);   /* the results are the coordinator's alone */
              take_result (q, worked, st.MPI_SOURCE, payload);
              int next = hand_out (q, st.MPI_SOURCE);
              g_mutex_lock (&q->lock);
              if ((code = MPI_Send (&next, 1, MPI_INT, st.MPI_SOURCE, TAG_ITEM,
                                    MPI_COMM_WORLD)) != MPI_SUCCESS)
                queue_failed ("MPI_Send", code);
              remote -= next < 0;
              idle = FALSE;
            }
        }
      if (idle)
        g_cond_wait_until (&q->cond, &q->lock, g_get_monotonic_time () + 1000);
    }
  g_mutex_unlock (&q->lock);
  return NULL;
}

/* Waits for every rank without spinning a core. */
static void
quiet_barrier (void)
{
  MPI_Request request;
  int code = MPI_Ibarrier (MPI_COMM_WORLD, &request), flag = 0;
  while (code == MPI_SUCCESS && !flag)
    {
      code = MPI_Test (&request, &flag, MPI_STATUS_IGNORE);
      if (!flag)
        g_usleep (1000);
    }
  if (code != MPI_SUCCESS)
    queue_failed ("MPI_Ibarrier", code);
}

static void
share_first (int n_items, CamlCliMpiBegin begin, CamlCliMpiWork work, CamlCliMpiDone done,
             gpointer data)
{
  Queue q = { .n_items = n_items, .size = size, .begin = begin, .done = done, .data = data };
  g_mutex_init (&q.lock);
  g_cond_init (&q.cond);
  GThread *coordinator = g_thread_new ("caml-share", coordinate, &q);
  int item = -1;
  GBytes *result = NULL;
  for (;;)
    {
      g_mutex_lock (&q.lock);
      q.worked = item;
      q.result = result;
      q.asks = TRUE;
      q.answered = FALSE;
      g_cond_broadcast (&q.cond);
      while (!q.answered)
        g_cond_wait (&q.cond, &q.lock);
      item = q.item;
      g_mutex_unlock (&q.lock);
      if (item < 0)
        break;
      result = work (item, data);
    }
  g_thread_join (coordinator);
  g_mutex_clear (&q.lock);
  g_cond_clear (&q.cond);
}

static void
share_other (CamlCliMpiWork work, gpointer data)
{
  gint32 item = -1;
  GBytes *result = NULL;
  for (;;)
    {
      gsize n = result != NULL ? g_bytes_get_size (result) : 0;
      g_autofree char *message = g_malloc (sizeof item + n);
      memcpy (message, &item, sizeof item);
      if (n > 0)
        memcpy (message + sizeof item, g_bytes_get_data (result, NULL), n);
      g_clear_pointer (&result, g_bytes_unref);
      int code, next;
      if ((code = MPI_Send (message, (int) (sizeof item + n), MPI_BYTE, 0, TAG_ASK,
                            MPI_COMM_WORLD)) != MPI_SUCCESS)
        queue_failed ("MPI_Send", code);
      if ((code = MPI_Recv (&next, 1, MPI_INT, 0, TAG_ITEM, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        queue_failed ("MPI_Recv", code);
      if (next < 0)
        break;
      item = next;
      result = work (item, data);
    }
}

void
caml_cli_mpi_share (int n_items, CamlCliMpiBegin begin, CamlCliMpiWork work,
                    CamlCliMpiDone done, gpointer data)
{
  if (size <= 1)
    share_alone (n_items, begin, work, done, data);
  else
    {
      if (rank == 0)
        share_first (n_items, begin, work, done, data);
      else
        share_other (work, data);
      quiet_barrier ();
    }
}

void
caml_cli_mpi_reduced (long *calls, double *bytes, double *seconds)
{
  *calls = reduced.calls;
  *bytes = reduced.bytes;
  *seconds = reduced.seconds;
}

#else   /* no MPI in this build: one rank */

gboolean
caml_cli_mpi_init (int *argc, char ***argv, GError **error)
{
  if (g_getenv ("OMPI_COMM_WORLD_SIZE") != NULL || g_getenv ("PMI_SIZE") != NULL)
    {
      const char *n = g_getenv ("OMPI_COMM_WORLD_SIZE");
      if (n == NULL)
        n = g_getenv ("PMI_SIZE");
      if (g_strcmp0 (n, "1") != 0)
        {
          g_set_error (error, CAML_ERROR, CAML_ERROR_INVALID,
                       "started on %s ranks by an MPI launcher, but this caml was built "
                       "without MPI (meson -Dmpi=enabled, with libopenmpi-dev)", n);
          return FALSE;
        }
    }
  return TRUE;
}

void
caml_cli_mpi_finalize (int status)
{
}

void
caml_cli_mpi_abort (int status)
{
  exit (status);
}

char *
caml_cli_mpi_library (void)
{
  return NULL;
}

int
caml_cli_mpi_rank (void)
{
  return 0;
}

int
caml_cli_mpi_size (void)
{
  return 1;
}

int
caml_cli_mpi_local_size (void)
{
  return 1;
}

gboolean
caml_cli_mpi_reduce (CamlReplicaSums *s, gpointer user_data, GError **error)
{
  return TRUE;
}

gboolean
caml_cli_mpi_ready (const char *problem)
{
  return problem == NULL;
}

gboolean
caml_cli_mpi_sum (double *values, gsize n, gpointer user_data, GError **error)
{
  return TRUE;
}

GPtrArray *
caml_cli_mpi_gather (GBytes *mine, GError **error)
{
  GPtrArray *all = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  g_ptr_array_add (all, g_bytes_ref (mine));
  return all;
}

void
caml_cli_mpi_share (int n_items, CamlCliMpiBegin begin, CamlCliMpiWork work,
                    CamlCliMpiDone done, gpointer data)
{
  share_alone (n_items, begin, work, done, data);
}

void
caml_cli_mpi_reduced (long *calls, double *bytes, double *seconds)
{
  *calls = reduced.calls;
  *bytes = reduced.bytes;
  *seconds = reduced.seconds;
}

#endif
