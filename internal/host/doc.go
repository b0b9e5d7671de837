// Package host is what pin reads of a machine that runs containers: the
// Snapshot model (its containers and their images), and snapshot files.
//
// A snapshot file is either pin's own JSON, as "pin lock --from-host HOST
// --snapshot FILE" writes it (a versioned object, see Snapshot), or the JSON
// array that "docker inspect $(docker ps -aq) $(docker images -q)" prints,
// containers and images mixed. Both read into the same Snapshot, so a user
// can hand over what a host runs without giving pin a socket. Both keep
// every container whatever its state, and the state itself.
//
// A snapshot that does not read is bad input, not an unreachable host: its
// error is a *SnapshotError naming the file (and the line and column where
// the JSON went wrong) and is ErrBadSnapshot; a file that cannot be read at
// all carries the fs error instead (fs.ErrNotExist when it is missing).
//
// The package reads and writes snapshots and nothing else: live Docker
// Engines are read by package host/docker, and deciding which container
// belongs to which module is package resolve's work.
package host
