module github.com/flakeid/flakeid-go/bench

go 1.24

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/flakeid/flakeid-go v0.0.0
	github.com/google/uuid v1.6.0
	github.com/sony/sonyflake/v2 v2.2.0
)

replace github.com/flakeid/flakeid-go => ../
