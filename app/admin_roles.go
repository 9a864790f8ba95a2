package app

func (a *App) roleRoutes(admin routeAdder) {
}
