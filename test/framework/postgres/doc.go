// Package postgres starts a real PostgreSQL server for tests and
// benchmarks: Debian's initdb and postgres (/usr/lib/postgresql/<v>/bin),
// a data directory and a unix socket directory of its own in a temporary
// directory, TCP on 127.0.0.1 on a port it picked free, fsync off. As root
// (which PostgreSQL refuses) it runs the server as the user nobody. Close
// stops the server and removes its directory; Stop and Start again let a
// test take the database away and bring it back.
package postgres
