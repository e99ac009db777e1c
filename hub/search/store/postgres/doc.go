// Package postgres is the search index in PostgreSQL (pgx/v5 with a
// connection pool), for large fleets and for hubs that run more than one
// replica: every hub writes and queries the same database.
//
// The schema follows the embedded store's: objects with its sort key in
// the "C" collation (so both stores order alike), labels and fields keyed
// by (key, value), and pg_trgm GIN indexes on the lowercased name and on
// the images for substring searches. Its version is in search_schema,
// migrated under an advisory lock so that hubs starting together migrate
// once. A database that does not answer makes every method return an error
// wrapping store.ErrUnavailable; the pool connects again by itself when the
// server is back, and a store opened while the server was down migrates on
// its first use.
package postgres
