package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/flotilla-io/flotilla/test/framework"
)

// benchConsole runs the fleet simulator, gives every cluster a policy, and
// times `flotilla console` against it: its start (informers synced), the
// first paint of the fleet and governance views in headless Chromium, and
// its memory.
func benchConsole(ctx context.Context, e *env) error {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		return fmt.Errorf("the console bench needs Debian's chromium: apt-get install chromium")
	}
	n := *benchClusters
	quietKlog()
	ctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	f, stop, err := startFleet(ctx, e, n, abort)
	if err != nil {
		return withCause(ctx, err)
	}
	defer stop()
	if err := f.policy(ctx); err != nil {
		return withCause(ctx, err)
	}

	started := time.Now()
	p, err := framework.StartProcess(ctx, filepath.Join(e.binDir, "flotilla"), "console", "--port", "0", "--kubeconfig", f.hub.Kubeconfig)
	if err != nil {
		return err
	}
	defer p.Stop(10 * time.Second)
	if err := p.WaitForOutput("Console: http", 10*time.Minute); err != nil {
		return fmt.Errorf("the console did not start: %w\n%s", err, p.Tail(20))
	}
	row(fmt.Sprintf("console with %d clusters: start to serving (informers synced)", n), seconds(time.Since(started)), "")
	m := regexp.MustCompile(`Console: (http://127\.0\.0\.1:\d+)(/login\?secret=\S+)`).FindStringSubmatch(p.Output())
	if m == nil {
		return fmt.Errorf("no URL in the console's output:\n%s", p.Tail(20))
	}
	base := m[1]

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.WindowSize(1440, 900), chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(filepath.Join(e.workDir, "chromium")),
		chromedp.Env("TMPDIR="+e.workDir)) // where Chromium leaves its singleton socket's directory
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	browser, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if err := chromedp.Do(browser, chromedp.Navigate(base+m[2])); err != nil {
		return fmt.Errorf("open the console: %w", err)
	}
	for _, view := range []string{"fleet", "governance"} {
		// The second load of each view: the first warms the browser.
		var paint, loaded float64
		for range 2 {
			if err := chromedp.Do(browser, chromedp.Navigate(base+"/"+view)); err != nil {
				return fmt.Errorf("open %s: %w", view, err)
			}
			var err error
			if paint, err = chromedp.Run(browser, chromedp.Poll[float64](`(performance.getEntriesByName("first-contentful-paint")[0]||{}).startTime`, chromedp.WithPollingTimeout(time.Minute))); err != nil {
				return fmt.Errorf("time %s: %w", view, err)
			}
			if loaded, err = chromedp.Run(browser, chromedp.Poll[float64](`performance.getEntriesByType("navigation")[0].loadEventEnd`, chromedp.WithPollingTimeout(time.Minute))); err != nil {
				return fmt.Errorf("time %s: %w", view, err)
			}
		}
		row(fmt.Sprintf("console %s view, %d clusters: first contentful paint", view, n), seconds(time.Duration(paint*float64(time.Millisecond))), "< 1 s")
		row(fmt.Sprintf("console %s view, %d clusters: load event", view, n), seconds(time.Duration(loaded*float64(time.Millisecond))), "")
	}
	rss, err := p.RSS()
	if err != nil {
		return err
	}
	row(fmt.Sprintf("console RSS with %d clusters, after the views", n), mib(rss), "< 150 MiB")
	if peak, err := framework.PeakRSSOf(p.Pid()); err == nil {
		row("console peak RSS", mib(peak), "")
	}
	return nil
}
