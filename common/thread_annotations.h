// Clang's thread-safety attributes as macros, for the static analysis that
// -Wthread-safety runs (clang.llvm.org/docs/ThreadSafetyAnalysis.html). They
// expand to nothing under other compilers (GCC builds the release), so they
// cost nothing at run time and change no code.
//
// The names carry a RIGEL_ prefix because bare ones clash with other
// headers' macros (<scsi/scsi.h> defines RELEASE, for one).
//
// Use them with the annotated rigel::Mutex (common/mutex.h): std::mutex in
// libstdc++ is not a capability, so locks taken on it are invisible to the
// analysis.
//   RIGEL_GUARDED_BY(mu)       on a member: read and written only with mu held.
//   RIGEL_PT_GUARDED_BY(mu)    on a pointer member: the pointee is guarded.
//   RIGEL_REQUIRES(mu)         on a function: callers hold mu (exclusively).
//   RIGEL_REQUIRES_SHARED(mu)  as REQUIRES, held at least shared.
//   RIGEL_EXCLUDES(mu)         callers do not hold mu (the function takes it).
//   RIGEL_ACQUIRE / RIGEL_RELEASE / RIGEL_TRY_ACQUIRE(result, mu)
//                              the function takes / gives back / may take mu.
//   RIGEL_ASSERT_CAPABILITY(mu) the function returns only if mu is held.
//   RIGEL_RETURN_CAPABILITY(mu) the function returns a reference to mu.
//   RIGEL_CAPABILITY(name), RIGEL_SCOPED_CAPABILITY
//                              on a class: a lock, or an RAII holder of one.
//   RIGEL_NO_THREAD_SAFETY_ANALYSIS
//                              turns the analysis off for one function; every
//                              use says, next to it, why the analysis cannot
//                              follow that function.
#ifndef RIGEL_COMMON_THREAD_ANNOTATIONS_H_
#define RIGEL_COMMON_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(x) __attribute__((x))
#else
#define RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(x)
#endif

#define RIGEL_CAPABILITY(x) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(capability(x))

#define RIGEL_SCOPED_CAPABILITY RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(scoped_lockable)

#define RIGEL_GUARDED_BY(x) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(guarded_by(x))

#define RIGEL_PT_GUARDED_BY(x) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(pt_guarded_by(x))

#define RIGEL_REQUIRES(...) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(requires_capability(__VA_ARGS__))

#define RIGEL_REQUIRES_SHARED(...) \
  RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(requires_shared_capability(__VA_ARGS__))

#define RIGEL_ACQUIRE(...) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(acquire_capability(__VA_ARGS__))

#define RIGEL_RELEASE(...) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(release_capability(__VA_ARGS__))

#define RIGEL_TRY_ACQUIRE(...) \
  RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(try_acquire_capability(__VA_ARGS__))

#define RIGEL_EXCLUDES(...) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(locks_excluded(__VA_ARGS__))

#define RIGEL_ASSERT_CAPABILITY(x) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(assert_capability(x))

#define RIGEL_RETURN_CAPABILITY(x) RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(lock_returned(x))

#define RIGEL_NO_THREAD_SAFETY_ANALYSIS \
  RIGEL_THREAD_ANNOTATION_ATTRIBUTE_(no_thread_safety_analysis)

#endif  // RIGEL_COMMON_THREAD_ANNOTATIONS_H_
