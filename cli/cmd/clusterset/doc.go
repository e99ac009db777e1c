// Package clusterset is `flotilla clusterset set|bind|unbind`: label
// clusters into a ManagedClusterSet, and create or delete its
// ManagedClusterSetBinding in a namespace. Creating a set is `create
// clusterset` (package create).
package clusterset
