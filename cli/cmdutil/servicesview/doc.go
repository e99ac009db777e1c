// Package servicesview renders the hub's objects of multi-cluster
// services (ExportedServices and ImportedServices, api/mcs/v1alpha1) as
// the CLI's get and describe commands and the console show them: ports,
// endpoint counts, the cluster set, the hub's conflict verdicts and what
// to do about them.
package servicesview
