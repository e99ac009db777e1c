// Package search is `flotilla search`: one query over the objects of
// every managed cluster the user may see, answered by the hub's search
// index (hub/search/query) at search.SearchPath.
package search
