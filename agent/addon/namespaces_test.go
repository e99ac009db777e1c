package addon

import (
	"strings"
	"testing"
)

// TestInstallable: with install namespaces given, an add-on elsewhere is
// refused with the value and flag to change; without, any namespace goes.
func TestInstallable(t *testing.T) {
	for _, tc := range []struct {
		name       string
		namespaces []string
		ns         string
		want       string
	}{
		{"any namespace", nil, "anywhere", ""},
		{"a listed namespace", []string{"open-cluster-management-agent-addon", "submariner"}, "submariner", ""},
		{"another namespace", []string{"open-cluster-management-agent-addon"}, "kube-system", "addons.installNamespaces (flag --addon-install-namespaces)"},
	} {
		r := &runner{Agent: &Agent{cfg: Config{InstallNamespaces: tc.namespaces}}}
		got := r.installable(tc.ns)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) || tc.want != "" && !strings.Contains(got, tc.ns) {
			t.Errorf("%s: installable(%q) = %q, want %q", tc.name, tc.ns, got, tc.want)
		}
	}
}
