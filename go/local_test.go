package flakeid

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// newLocal is a handle of a new generator of o; the generator is closed when the
// test ends, the handle is the test's to close.
func newLocal(t *testing.T, o Options) (*Generator, *Local) {
	t.Helper()
	g := newGen(t, o)
	l, err := g.Local()
	if err != nil {
		t.Fatal(err)
	}
	return g, l
}

// Goroutines with a Local each, and goroutines on the generator itself, on
// GOMAXPROCS 8 and yielding often (so they move between OS threads): no ID twice,
// and each goroutine's IDs strictly increase.
func TestLocalNoDuplicatesWithTheGenerator(t *testing.T) {
	prev := runtime.GOMAXPROCS(8)
	defer runtime.GOMAXPROCS(prev)
	onEachOverflow(t, 581, 582, func(t *testing.T, g *Generator) {
		const workers = 8 // 0..5 on a Local of their own, 6 and 7 on g
		n := perGoroutine(t, 50_000)
		got := issueAtOnce(t, workers, func(w int) ([]ID, error) {
			if w >= 6 {
				return mixed(n, 1+w*5, 4, g.Next, g.Fill, true)
			}
			l, err := g.Local()
			if err != nil {
				return nil, err
			}
			defer l.Close()
			return mixed(n, 1+w*5, 4, l.Next, l.Fill, true)
		})
		checkEachIncreasesNoneRepeats(t, got, workers*n)
	})
}

// A closed generator stops its handles (the library's error, naming generator),
// lets its node id go at once though a handle is open, and is freed by the last
// handle's Close.
func TestLocalAfterTheGeneratorCloses(t *testing.T) {
	g, err := New(Options{Node: 583})
	if err != nil {
		t.Fatal(err)
	}
	l, err := g.Local()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Next(); err != nil {
		t.Fatal(err)
	}
	// A second generator on node 583 shares its counter: no error, no repeat.
	second, err := New(Options{Node: 583})
	if err != nil {
		t.Fatalf("a second generator on node 583 while the first lives: %v", err)
	}
	a, _ := g.Next()
	b, _ := second.Next()
	if b <= a {
		t.Fatalf("%d after %d on one node id's counter", b, a)
	}
	second.Close()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	var fe *Error
	if _, err := l.Next(); !errors.As(err, &fe) || fe.Kind != ErrConfig || fe.Field != "generator" {
		t.Fatalf("Next on a closed generator's handle: %#v", err)
	}
	if err := l.Fill(make([]ID, 3)); !errors.As(err, &fe) || fe.Kind != ErrConfig || fe.Field != "generator" {
		t.Fatalf("Fill on a closed generator's handle: %#v", err)
	}
	if _, err := g.Local(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Local of a closed generator: %v", err)
	}
	if _, err := g.Next(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next of a closed generator: %v", err)
	}
	// Another generator on node 583 after Close, with the handle still open.
	g2, err := New(Options{Node: 583})
	if err != nil {
		t.Fatalf("node 583 after Close: %v", err)
	}
	defer g2.Close()
	g.mu.RLock()
	held := g.orphan != nil
	g.mu.RUnlock()
	if !held {
		t.Fatal("the generator was freed under an open handle")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.orphan != nil || g.locals != 0 {
		t.Fatalf("after the last handle's Close: orphan %v, %d handles", g.orphan, g.locals)
	}
}

// A closed Local returns ErrClosed and issues nothing; its generator goes on.
func TestLocalUseAfterClose(t *testing.T) {
	g, l := newLocal(t, Options{Node: 585})
	a, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if id, err := l.Next(); !errors.Is(err, ErrClosed) || id != 0 {
		t.Fatalf("Next after Close: %d, %v", id, err)
	}
	ids := []ID{7, 7}
	if err := l.Fill(ids); !errors.Is(err, ErrClosed) || ids[0] != 7 {
		t.Fatalf("Fill after Close: %v, %v", ids, err)
	}
	if ids, err := l.NextN(2); !errors.Is(err, ErrClosed) || ids != nil {
		t.Fatalf("NextN after Close: %v, %v", ids, err)
	}
	b, err := g.Next()
	if err != nil || b <= a {
		t.Fatalf("the generator after its handle's Close: %d after %d, %v", b, a, err)
	}
}

// The batch size is the core's rule, checked before allocating; a handle's batch
// increases and continues above its single IDs.
func TestLocalBatches(t *testing.T) {
	g, l := newLocal(t, Options{Node: 586, Overflow: OverflowBorrow})
	defer l.Close()
	var fe *Error
	for _, n := range []int{-1, 1<<27 + 1} {
		if ids, err := l.NextN(n); ids != nil || !errors.As(err, &fe) || fe.Kind != ErrConfig || fe.Field != "n" {
			t.Fatalf("NextN(%d): %v, %#v", n, ids, err)
		}
	}
	if ids, err := l.NextN(0); err != nil || len(ids) != 0 {
		t.Fatalf("NextN(0): %v, %v", ids, err)
	}
	first, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	ids, err := l.NextN(1000)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if (i == 0 && id <= first) || (i > 0 && id <= ids[i-1]) {
			t.Fatalf("batch[%d] = %d, not above the one before", i, id)
		}
	}
	if l.Generator() != g {
		t.Fatal("Generator() is not the handle's generator")
	}
}

// A call while another goroutine's call is in progress is refused with ErrInUse
// (the state a call in progress sets, set here by hand), and Close waits for it.
func TestLocalRefusesASecondGoroutine(t *testing.T) {
	_, l := newLocal(t, Options{Node: 587})
	l.state.Store(localBusy) // another goroutine's call, in progress
	if id, err := l.Next(); !errors.Is(err, ErrInUse) || id != 0 {
		t.Fatalf("Next during another call: %d, %v", id, err)
	}
	if err := l.Fill(make([]ID, 2)); !errors.Is(err, ErrInUse) {
		t.Fatalf("Fill during another call: %v", err)
	}
	closed := make(chan error)
	go func() { closed <- l.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned during a call: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	l.state.Store(localIdle) // that call returns
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if _, err := l.Next(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Next after Close: %v", err)
	}
}

// Goroutines sharing one Local by mistake, at once: each call issues an ID or is
// refused with ErrInUse; no ID repeats, and each goroutine's IDs still increase.
func TestLocalSharedByMistakeNeverRepeats(t *testing.T) {
	prev := runtime.GOMAXPROCS(8)
	defer runtime.GOMAXPROCS(prev)
	_, l := newLocal(t, Options{Node: 588, Overflow: OverflowBorrow, MaxBorrow: time.Hour})
	defer l.Close()
	const workers = 8
	n := perGoroutine(t, 20_000)
	got := issueAtOnce(t, workers, func(int) ([]ID, error) {
		var ids []ID
		for i := 0; i < n; i++ {
			id, err := l.Next()
			switch {
			case errors.Is(err, ErrInUse):
			case err != nil:
				return nil, err
			default:
				ids = append(ids, id)
			}
		}
		return ids, nil
	})
	total := 0
	for _, ids := range got {
		total += len(ids)
	}
	checkEachIncreasesNoneRepeats(t, got, total)
}

// A Local dropped unclosed is freed by the garbage collector, and then the
// generator it kept (closed meanwhile) with it.
func TestLocalDroppedUnclosed(t *testing.T) {
	g, err := New(Options{Node: 589})
	if err != nil {
		t.Fatal(err)
	}
	func() {
		l, err := g.Local()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Next(); err != nil {
			t.Fatal(err)
		}
	}()
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		runtime.GC()
		g.mu.RLock()
		state := fmt.Sprintf("orphan %v, %d handles", g.orphan, g.locals)
		done := g.orphan == nil && g.locals == 0
		g.mu.RUnlock()
		if done {
			return
		}
		if i == 500 {
			t.Fatalf("the dropped handle was never freed: %s", state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
