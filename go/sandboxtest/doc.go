// Package sandboxtest holds test helpers for code that spawns sandboxed
// plugin subprocesses with package sandbox: short socket directories, a
// Spec for a binary, a forced backend, skips that say what is missing, and
// a private launch service.
package sandboxtest
