package members

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints members as a table, one a line.
func WriteTable(w io.Writer, members []Member) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tPEER URLS\tCLIENT URLS\tSTARTED\tLEARNER\tLEADER\tANSWERS\t")
	for _, m := range members {
		name := m.Name
		if name == "" {
			name = "-"
		}
		if m.Local {
			name += " (this hub)"
		}
		clients := strings.Join(m.ClientURLs, ",")
		if clients == "" {
			clients = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, m.ID, strings.Join(m.PeerURLs, ","), clients, yesNo(m.Started), yesNo(m.Learner), yesNo(m.Leader), yesNo(m.Answers))
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
