module example.invalid/flakeid/go

go 1.24
