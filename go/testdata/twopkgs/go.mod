module twopkgs

go 1.24

require github.com/flakeid/flakeid-go v0.0.0

replace github.com/flakeid/flakeid-go => ../..
