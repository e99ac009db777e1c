package cmdutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// Output formats of -o/--output. The empty format is the human-readable one.
const (
	OutputText = ""
	OutputJSON = "json"
	OutputYAML = "yaml"
	OutputWide = "wide"
)

// AddOutputFlag adds -o/--output, accepting the given formats besides the
// human-readable default, with shell completion of the values.
func AddOutputFlag(cmd *cobra.Command, target *string, formats ...string) {
	cmd.Flags().StringVarP(target, "output", "o", OutputText, "output format: one of "+strings.Join(formats, ", ")+" (default: human-readable text)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
}

// CheckOutput rejects an output format the command does not offer.
func CheckOutput(format string, formats ...string) error {
	if format == OutputText || slices.Contains(formats, format) {
		return nil
	}
	return fmt.Errorf("--output %q is not supported by this command: use one of %s, or leave it out for text", format, strings.Join(formats, ", "))
}

// PrintData writes v as indented JSON or as YAML.
func PrintData(w io.Writer, format string, v any) error {
	switch format {
	case OutputJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case OutputYAML:
		data, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return fmt.Errorf("internal error: printData with output %q", format)
}

// PrintTable writes rows under a header, in columns separated by three
// spaces as kubectl does, without trailing spaces where the last cells of
// a row are empty.
func PrintTable(w io.Writer, header []string, rows [][]string) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	lines := strings.Split(buf.String(), "\n")
	for i, line := range lines {
		lines[i] = strings.TrimRight(line, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}
