// Package sqlq builds the SQL both search stores share: a Query's WHERE
// clause over the objects table and its label, field and image tables, its
// keyset pagination (the continue token is the last row's sort key), and the
// rules that decide whether an upsert is written (resource versions compared
// as numbers, so that a replayed older batch never goes back in time).
//
// The two dialects differ only in placeholders and in how a substring of a
// name or an image is found, which each store passes in as a Dialect.
package sqlq
