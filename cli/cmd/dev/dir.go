package dev

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/cli/cmdutil"
)

// findDir picks the dev environment that a command about an existing one
// (status, restart) works on, as a user expects: --dir when given; else
// the environment that the kubeconfig (--kubeconfig, else KUBECONFIG)
// points into, as `export KUBECONFIG=DIR/hub/admin.kubeconfig` after
// `dev up --dir DIR` or `make demo` does; else the default. It says
// which it uses, and why, unless --dir named it.
func (o *devOptions) findDir(cmd *cobra.Command) {
	if cmd.Flags().Changed("dir") {
		return
	}
	if dir, source := o.kubeconfigDevDir(); dir != "" {
		o.dir = dir
		o.Notef("Using the dev environment in %s, which %s points into (--dir chooses another).", dir, source)
		return
	}
	o.Notef("Using the dev environment in %s, the default (--dir chooses another).", o.dir)
}

// kubeconfigDevDir returns the dev environment whose kubeconfig the
// command would use, and what named the kubeconfig; "" if it is none of
// a dev environment's.
func (o *devOptions) kubeconfigDevDir() (dir, source string) {
	paths, source := []string{o.Kubeconfig}, "--kubeconfig"
	if o.Kubeconfig == "" {
		paths, source = filepath.SplitList(os.Getenv("KUBECONFIG")), "KUBECONFIG"
	}
	for _, p := range paths {
		if dir := devDirOf(p); dir != "" {
			return dir, source
		}
	}
	return "", ""
}

// devDirOf returns the dev environment that kubeconfig is one of (the
// hub's or a cluster's admin kubeconfig, DIR/PIECE/admin.kubeconfig), or "".
func devDirOf(kubeconfig string) string {
	if kubeconfig == "" {
		return ""
	}
	abs, err := filepath.Abs(kubeconfig)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(filepath.Dir(abs))
	st, err := loadDevState(dir)
	if err != nil {
		return ""
	}
	kubeconfigs := []string{st.Hub.Kubeconfig}
	for _, c := range st.Clusters {
		kubeconfigs = append(kubeconfigs, c.Kubeconfig)
	}
	if !slices.ContainsFunc(kubeconfigs, func(k string) bool { return cmdutil.SameFile(k, abs) }) {
		return ""
	}
	return dir
}

// flotilla is the command line of a flotilla command that a message
// suggests, with this executable as it can be run as typed
// (cmdutil.Self): "flotilla dev up", or "bin/flotilla dev up".
func flotilla(args ...string) string {
	return strings.Join(append([]string{cmdutil.Self()}, args...), " ")
}
