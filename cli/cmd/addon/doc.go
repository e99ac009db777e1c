// Package addon is `flotilla addon enable|disable`: install an OCM add-on
// on clusters (a ManagedClusterAddOn in each cluster's namespace, as
// clusteradm does) or on the clusters of a Placement (the add-on's
// install strategy), and remove it again. Listing add-ons is `get addons`
// (package get).
package addon
