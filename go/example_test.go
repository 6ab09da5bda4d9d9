package flakeid_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/flakeid/flakeid-go"
)

// A first ID, for go doc (go/README.md's blocks run as written in TestDocBlocks).
func Example() {
	gen, err := flakeid.New(flakeid.Options{Datacenter: 1, Worker: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer gen.Close()
	id, err := gen.Next()
	if err != nil {
		log.Fatal(err)
	}
	p, _ := id.Parts()
	fmt.Println(p.Datacenter, p.Worker, len(id.Encode(flakeid.Base62)))
	// Output: 1 2 11
}

func ExampleLayout_Decompose() {
	p, err := flakeid.Snowflake.Decompose(910499571847892992) // seed 001
	fmt.Println(p.Time().Format("2006-01-02T15:04:05.000Z"), p.Datacenter, p.Worker, p.Sequence, err)
	// Output: 2017-09-20T13:43:08.849Z 17 25 0 <nil>
}

func ExampleKind() {
	_, err := flakeid.New(flakeid.Options{Worker: 32})
	var fe *flakeid.Error
	fmt.Println(errors.Is(err, flakeid.ErrConfig), errors.As(err, &fe) && fe.Field == "worker")
	fmt.Println(err)
	// Output:
	// true true
	// flakeid: invalid configuration: worker must be in 0..=31, got 32
}
