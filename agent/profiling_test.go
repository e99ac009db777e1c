package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	. "github.com/onsi/gomega"
)

func TestProfilingHandlers(t *testing.T) {
	g := NewWithT(t)
	mux := http.NewServeMux()
	for path, h := range profilingHandlers() {
		mux.Handle(path, h)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()

	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		g.Expect(resp.StatusCode).To(Equal(http.StatusOK), path)
		b, err := io.ReadAll(resp.Body)
		g.Expect(err).NotTo(HaveOccurred())
		return string(b)
	}
	mem := get("/debug/memory")
	g.Expect(mem).To(MatchRegexp(`/memory/classes/heap/objects:bytes +[1-9][0-9]*\n`))
	g.Expect(mem).To(MatchRegexp(`/sched/goroutines:goroutines +[1-9][0-9]*\n`))
	if runtime.GOOS == "linux" {
		g.Expect(mem).To(ContainSubstring("/proc/self/smaps_rollup:\n"))
		g.Expect(mem).To(MatchRegexp(`\nRss: +[1-9][0-9]* kB`))
		g.Expect(mem).To(MatchRegexp(`RssFile:\s+[0-9]+ kB`))
	}
	g.Expect(get("/debug/pprof/")).To(ContainSubstring("goroutine"))
	g.Expect(get("/debug/pprof/heap?debug=1")).To(ContainSubstring("heap profile"))
}
