package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("flotilla version", func() {
	// Every commit of a release carries the release's version (the charts'
	// appVersion, the images' tag), so the version line also names the
	// commit the binary was built from.
	It("names the release and the commit the binary was built from", func(ctx SpecContext) {
		head, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
		if err != nil {
			Skip("not in a git checkout: " + err.Error())
		}
		out, err := exec.CommandContext(ctx, filepath.Join(*binDir, "flotilla"), "version", "--client", "-o", "json").Output()
		Expect(err).NotTo(HaveOccurred())
		var info struct {
			ClientVersion struct {
				Version  string `json:"version"`
				Revision string `json:"revision"`
			} `json:"clientVersion"`
		}
		Expect(json.Unmarshal(out, &info)).To(Succeed(), string(out))
		Expect(info.ClientVersion.Version).NotTo(BeEmpty())
		Expect(info.ClientVersion.Revision).To(HavePrefix(strings.TrimSpace(string(head))[:12]), string(out))

		text, err := exec.CommandContext(ctx, filepath.Join(*binDir, "flotilla"), "version", "--client").Output()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(text)).To(ContainSubstring("commit " + info.ClientVersion.Revision))
	})
})
