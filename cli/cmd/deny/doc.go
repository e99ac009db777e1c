// Package deny is `flotilla deny`: on the hub, stop accepting clusters by
// clearing their spec.hubAcceptsClient.
package deny
