// Package storetest is the conformance suite every store.Store passes, run
// by each store's tests against a real database, and the store-level
// benchmark (Load and Measure) that test/bench runs at fleet size.
package storetest
