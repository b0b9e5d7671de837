// Package git runs the user's own git: the binary on PATH, in the user's
// repository, with the user's configuration, credentials, ssh agent and
// signing settings. pin propose reaches a git remote only through it, so a
// push goes wherever and however the user's git pushes.
//
// It is a thin adapter: each method is one or two git commands whose
// output is read in git's machine formats (--porcelain, -z, --format).
// It decides nothing about what to commit or push; package propose does,
// through a small interface it declares. Errors are *Error (the command,
// its exit code and what git said on stderr) and, for a rejected push,
// *PushRejectedError, whose reason ErrStale marks a lease that no longer
// holds (the branch moved since it was read).
package git
