package app

func (a *App) sessionRoutes(admin routeAdder) {
}
