package pricing

// generated at 2026-07-20T13:44:30Z for us-east-1

var InitialOnDemandPricesAWS = map[string]map[ec2types.InstanceType]float64{
	// us-east-1
	"us-east-1": {
		// p5 family
		"p5.48xlarge": 55.040000, "p5.4xlarge": 6.880000,
		// p5en family
		"p5en.48xlarge": 63.296000,
	},
}
