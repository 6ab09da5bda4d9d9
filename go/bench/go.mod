module example.invalid/flakeid/go/bench

go 1.24

require (
	example.invalid/flakeid/go v0.0.0
	github.com/bwmarrin/snowflake v0.3.0
	github.com/sony/sonyflake/v2 v2.2.0
)

replace example.invalid/flakeid/go => ../
