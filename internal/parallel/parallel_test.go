package parallel

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

func TestRunReturnsEachErrorAtItsIndexWithinTheBound(t *testing.T) {
	const workers = 3
	var running, most atomic.Int32
	release := make(chan struct{})
	var once sync.Once
	jobs := make([]func(context.Context) error, 10)
	for i := range jobs {
		jobs[i] = func(context.Context) error {
			n := running.Add(1)
			defer running.Add(-1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			if n == workers {
				once.Do(func() { close(release) })
			}
			<-release
			if i%2 == 1 {
				return fmt.Errorf("job %d", i)
			}
			return nil
		}
	}
	errs := Run(context.Background(), workers, jobs)
	if got := most.Load(); got != workers {
		t.Errorf("at most %d jobs ran at once, want %d", got, workers)
	}
	for i, err := range errs {
		var want error
		if i%2 == 1 {
			want = fmt.Errorf("job %d", i)
		}
		if fmt.Sprint(err) != fmt.Sprint(want) {
			t.Errorf("errs[%d] = %v, want %v", i, err, want)
		}
	}
}

func TestRunWithoutJobs(t *testing.T) {
	if errs := Run(context.Background(), 4, nil); len(errs) != 0 {
		t.Fatalf("Run(nil) = %v", errs)
	}
}
