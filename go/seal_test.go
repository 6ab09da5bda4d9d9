package flakeid

import (
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// --- seal.json (tests/vectors) ---

func sealerOf(t *testing.T, c obj) (*Sealer, error) {
	t.Helper()
	key, err := hex.DecodeString(str(t, c, "key"))
	if err != nil {
		t.Fatalf("key: %v", err)
	}
	var tweak []byte
	if tw, ok := c["tweak"]; ok {
		if tweak, err = hex.DecodeString(tw.(string)); err != nil {
			t.Fatalf("tweak: %v", err)
		}
	}
	return NewSealer(key, SealerOptions{Layout: layoutOK(t, c), Tweak: tweak})
}

func sealGroupCase(t *testing.T, c obj) {
	s, err := sealerOf(t, c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Bits() != uint32(num(t, c, "bits")) {
		t.Fatalf("Bits() = %d, want %d", s.Bits(), num(t, c, "bits"))
	}
	cases := c["cases"].([]any)
	if len(cases) == 0 {
		t.Fatal("a group without cases")
	}
	for _, x := range cases {
		k := x.(obj)
		id, sealed := idAt(t, k, "id"), idAt(t, k, "sealed")
		if got, err := s.Seal(id); err != nil || got != sealed {
			t.Fatalf("Seal(%d) = %d, %v; want %d", id, got, err, sealed)
		}
		if got, err := s.Unseal(sealed); err != nil || got != id {
			t.Fatalf("Unseal(%d) = %d, %v; want %d", sealed, got, err, id)
		}
	}
}

func sealInvalidCase(t *testing.T, c obj) {
	s, err := sealerOf(t, c)
	switch op := str(t, c, "op"); op {
	case "new":
	case "seal", "unseal":
		if err != nil {
			t.Fatalf("NewSealer: %v", err)
		}
		defer s.Close()
		if op == "seal" {
			_, err = s.Seal(idAt(t, c, "id"))
		} else {
			_, err = s.Unseal(idAt(t, c, "id"))
		}
	default:
		t.Fatalf("unknown op %q", op)
	}
	expectError(t, err, c)
	if key := str(t, c, "key"); len(key) >= 8 && strings.Contains(strings.ToLower(err.Error()), key[:8]) {
		t.Fatalf("the error shows the key: %v", err)
	}
}

// --- properties and the Go surface ---

var sealKey = []byte("0123456789abcdef")

func TestSealRoundTripsAndStaysInRange(t *testing.T) {
	for _, l := range []Layout{Snowflake, mustPreset("discord"), mustPreset("sonyflake")} {
		s, err := NewSealer(sealKey, SealerOptions{Layout: l, Tweak: []byte("t")})
		if err != nil {
			t.Fatal(err)
		}
		max := l.Limits().MaxID
		r := rand.New(rand.NewPCG(1, 2))
		for i := 0; i < 2000; i++ {
			id := ID(r.Uint64()) & max
			sealed, err := s.Seal(id)
			if err != nil || sealed > max {
				t.Fatalf("Seal(%d) = %d, %v (max %d)", id, sealed, err, max)
			}
			if back, err := s.Unseal(sealed); err != nil || back != id {
				t.Fatalf("Unseal(Seal(%d)) = %d, %v", id, back, err)
			}
		}
		if _, err := s.Seal(max + 1); max != ^ID(0) && !errors.Is(err, ErrConfig) {
			t.Fatalf("Seal(max+1): %v", err)
		}
		s.Close()
	}
}

// A 21-bit layout's sealing is a permutation of all 2^21 values.
func TestSealIsAPermutation(t *testing.T) {
	t.Parallel() // 2^21 seals, ~2 s under -race: overlaps the doc blocks' builds
	l, err := NewLayout(LayoutSpec{TimeBits: 9, WorkerBits: 4, SequenceBits: 8, TickMs: 1, EpochMs: 1288834974657})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSealer(sealKey, SealerOptions{Layout: l})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	seen := make([]bool, 1<<21)
	for id := ID(0); id < 1<<21; id++ {
		sealed, err := s.Seal(id)
		if err != nil || sealed >= 1<<21 || seen[sealed] {
			t.Fatalf("Seal(%d) = %d, %v (a repeat or out of range)", id, sealed, err)
		}
		seen[sealed] = true
	}
}

func TestSealerHidesItsKeyAndCloses(t *testing.T) {
	key, _ := hex.DecodeString("2b7e151628aed2a6abf7158809cf4f3c")
	s, err := NewSealer(key, SealerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "flakeid.Sealer{bits: 63}" {
		t.Fatalf("String() = %q", got)
	}
	_, err = NewSealer(key[:15], SealerOptions{})
	if err == nil || strings.Contains(err.Error(), "2b7e15") || strings.Contains(err.Error(), hex.EncodeToString(key[:15])) {
		t.Fatalf("short key: %v", err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := ID(0); i < 500; i++ {
				if _, err := s.Seal(i); err != nil && !errors.Is(err, ErrClosed) {
					t.Error(err)
					return
				}
			}
		}()
	}
	s.Close()
	wg.Wait()
	if _, err := s.Seal(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Seal after Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
