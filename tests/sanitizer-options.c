/* sanitizer-options.c — for the tests that ask for petabytes to check the
 * "cannot be allocated" errors: malloc refuses such sizes with NULL, while
 * AddressSanitizer and ThreadSanitizer abort instead unless told to return
 * NULL too. Linked into those tests only (tests/meson.build). */
#if defined(__SANITIZE_ADDRESS__)
#define CAML_TEST_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define CAML_TEST_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CAML_TEST_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define CAML_TEST_TSAN 1
#endif
#endif

#ifdef CAML_TEST_ASAN
const char *__asan_default_options (void);
const char *
__asan_default_options (void)
{
  return "allocator_may_return_null=1";
}
#endif

#ifdef CAML_TEST_TSAN
const char *__tsan_default_options (void);
const char *
__tsan_default_options (void)
{
  return "allocator_may_return_null=1";
}
#endif

/* Not empty without a sanitizer (ISO C). */
typedef int CamlTestSanitizerOptions;
