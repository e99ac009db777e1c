// Package accept is `flotilla accept`: on the hub, approve the CSRs of the
// named clusters and set their spec.hubAcceptsClient, optionally waiting
// until they have joined. The work itself is handshake.AcceptOptions,
// which dev up and the console use too.
package accept
