package flakeid

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// perGoroutine is how many IDs each of 8 goroutines takes (FLAKEID_GO_STRESS_IDS
// raises it for a longer run; -race makes each call ~10x slower).
func perGoroutine(t *testing.T, def int) int {
	if s := os.Getenv("FLAKEID_GO_STRESS_IDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if testing.Short() {
		return def / 10
	}
	return def
}

// 8 goroutines share one generator, mixing Next and Fill: no ID twice, and each
// goroutine sees its own IDs strictly increase.
func TestConcurrentNoDuplicates(t *testing.T) {
	onEachOverflow(t, 5, 5, func(t *testing.T, g *Generator) {
		const workers = 8
		n := perGoroutine(t, 100_000)
		got := issueAtOnce(t, workers, func(w int) ([]ID, error) {
			// Goroutine w mixes in batches of 1+7w.
			return mixed(n, 1+w*7, 3, g.Next, g.Fill, false)
		})
		checkEachIncreasesNoneRepeats(t, got, workers*n)
	})
}

// onEachOverflow runs f as the subtests "strict", on a generator of node strict,
// and "borrow", on one of node borrow that may borrow up to an hour ahead.
func onEachOverflow(t *testing.T, strict, borrow uint64, f func(t *testing.T, g *Generator)) {
	for _, tc := range []struct {
		name string
		o    Options
	}{
		{"strict", Options{Node: strict}},
		{"borrow", Options{Node: borrow, Overflow: OverflowBorrow, MaxBorrow: time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) { f(t, newGen(t, tc.o)) })
	}
}

// issueAtOnce runs issue on workers goroutines at once (w = 0, 1, ...) and
// returns what each issued (got[w]), failing the test on the first error.
func issueAtOnce(t *testing.T, workers int, issue func(w int) ([]ID, error)) [][]ID {
	t.Helper()
	got := make([][]ID, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids, err := issue(w)
			if err != nil {
				errs <- err
				return
			}
			got[w] = ids
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return got
}

// mixed takes n IDs from next, with a batch of batchSize from fill in place of
// every every-th call (order must hold across both); with yield, it lets other
// goroutines run every 7 IDs, so that it moves between OS threads.
func mixed(n, batchSize, every int, next func() (ID, error), fill func([]ID) error, yield bool) ([]ID, error) {
	ids := make([]ID, 0, n)
	batch := make([]ID, batchSize)
	for len(ids) < n {
		if len(ids)%every == 0 && len(ids)+len(batch) <= n {
			if err := fill(batch); err != nil {
				return nil, err
			}
			ids = append(ids, batch...)
		} else {
			id, err := next()
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		if yield && len(ids)%7 == 0 {
			runtime.Gosched()
		}
	}
	return ids, nil
}

// checkEachIncreasesNoneRepeats fails unless each goroutine's IDs (got[w])
// strictly increase, no ID is in two places, and there are want in all.
func checkEachIncreasesNoneRepeats(t *testing.T, got [][]ID, want int) {
	t.Helper()
	seen := make(map[ID]int, want)
	for w, ids := range got {
		for i, id := range ids {
			if i > 0 && id <= ids[i-1] {
				t.Fatalf("goroutine %d: ids[%d] = %d after %d", w, i, id, ids[i-1])
			}
			if other, dup := seen[id]; dup {
				t.Fatalf("ID %d issued to goroutines %d and %d", id, other, w)
			}
			seen[id] = w
		}
	}
	if len(seen) != want {
		t.Fatalf("%d IDs, want %d", len(seen), want)
	}
}

// Goroutines move between OS threads between their calls (here: 16 goroutines on
// GOMAXPROCS 8, yielding often). Each goroutine's IDs still increase: the library
// keeps no per-thread runs of IDs, which a goroutine back on a thread holding an
// older run would take from (14 of 16 goroutines went backwards when it did).
func TestEachGoroutinesIDsIncreaseAcrossThreads(t *testing.T) {
	prev := runtime.GOMAXPROCS(8)
	defer runtime.GOMAXPROCS(prev)
	g, err := New(Options{Node: 77, Overflow: OverflowBorrow, MaxBorrow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	n := perGoroutine(t, 50_000)
	var wg sync.WaitGroup
	bad := make(chan string, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var last ID
			for i := 0; i < n; i++ {
				id, err := g.Next()
				if err != nil {
					bad <- err.Error()
					return
				}
				if id <= last {
					bad <- fmt.Sprintf("goroutine %d: %d after %d", w, id, last)
					return
				}
				last = id
				if i%7 == 0 {
					runtime.Gosched()
				}
			}
		}(w)
	}
	wg.Wait()
	close(bad)
	for msg := range bad {
		t.Error(msg)
	}
}

// Close while other goroutines call: they get IDs until Close, then ErrClosed;
// never a crash or a use after free (-race and the C library's NULL checks).
func TestCloseWhileInUse(t *testing.T) {
	for round := 0; round < 20; round++ {
		g, err := New(Options{Node: 1, Overflow: OverflowBorrow})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for {
					if _, err := g.Next(); err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Error(err)
						}
						return
					}
				}
			}()
		}
		close(start)
		time.Sleep(time.Millisecond)
		g.Close()
		wg.Wait()
	}
}
