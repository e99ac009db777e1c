// Package sqlite is the search index embedded in the hub: one SQLite file
// in the hub's data directory (modernc.org/sqlite, pure Go), the default
// store that needs no setup.
//
// The file is in WAL mode with one writing connection and a few reading
// ones, so that queries never wait for an agent's batch. An object is a row
// of objects (its identity, sort key and the whole object as JSON) with its
// labels and selected fields in tables keyed by (key, value) and by (path,
// value), so that a label or field selector starts from the objects it
// names, and its lowercased name and images in an FTS5 trigram table, so
// that a substring search reads only the rows that contain the substring's
// trigrams. The schema is numbered in PRAGMA user_version.
package sqlite
