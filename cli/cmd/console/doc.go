// Package console is `flotilla console`: serve the web console of package
// cli/console on 127.0.0.1 with the user's own hub credentials, and give
// it the accept and deny actions of the command line.
package console
