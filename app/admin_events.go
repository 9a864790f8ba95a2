package app

func (a *App) eventRoutes(admin routeAdder) {
}

// recordAdminEvent records a successful admin write when the realm has
// admin events on.
func (a *App) recordAdminEvent(next handlerFunc) handlerFunc {
	return next
}
