// Package atomicfile is the one way pin writes a file: the lock, the
// catalogue lines pin init appends, the files pin export writes, a host's
// snapshot. It writes where the user's file is, whole or not at all, and
// never over content pin did not write unless told to.
//
// Write, for a path:
//
//   - follows a symbolic link, and a chain of them, to the file it names,
//     and replaces that file, so that a link stays a link and what reads
//     the target (a deploy, another checkout) reads the new bytes. A link
//     that names nothing (dangling) is refused (ErrDanglingLink): pin would
//     otherwise read "no file" and write one where the user may not expect
//     it. A path that names a folder, a device or a pipe is refused
//     (ErrNotRegular);
//   - writes nothing when the file already holds the bytes;
//   - refuses a file whose content the caller's Owned says is not pin's
//     (ErrNotOwned), unless Force; refuses a file that no longer holds what
//     the caller read (Since) and made its bytes from (ErrChanged), always;
//   - writes a temporary file in the target's own folder (named "." + the
//     target's name + a random number, see RemoveStale), with the target's
//     permission bits and, where the process may set them, its owner and
//     group; syncs it to disk; renames it over the target; and, on Unix,
//     syncs the folder, so that after a crash the file is the old one or
//     the new one, whole.
//
// On Windows a rename replaces the target atomically on the same volume
// (MoveFileEx with MOVEFILE_REPLACE_EXISTING and MOVEFILE_WRITE_THROUGH,
// which also stands for the folder's sync), but fails while another
// program holds the target open without sharing its deletion (some
// editors, virus scanners, indexers): Write retries for two seconds, then
// returns ErrBusy, leaving the target as it was and removing its
// temporary file. A read-only target is made writable for the rename and
// the new file is read-only again. Only the read-only bit is a mode there;
// owners are not kept.
//
// What is checked (Owned, Since) is read just before the temporary file is
// written: a program that changes the file in the milliseconds between
// that read and the rename is not detected. pin's own runs on one lock are
// kept apart by a lock on its folder, not by this package.
//
// The package depends on no other package of pin.
package atomicfile
