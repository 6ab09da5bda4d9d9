module github.com/flakeid/flakeid-go

go 1.24
