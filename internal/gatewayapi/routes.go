package gatewayapi

// routes converts the routes attached to the Gateways converted.
func (c *converter) routes() {}
