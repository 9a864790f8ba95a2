package scopes

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/idenplane/idenplane/store"
)

// scopeTemplate is a client scope every new realm starts with.
type scopeTemplate struct {
	name, description string
	mappers           []mapperTemplate
}

type mapperTemplate struct {
	name, mapperType string
	config           map[string]string
}

// tokenFlags sets a mapper's four token flags. Every flag is written out,
// because here an unset flag means on while in Keycloak it often means off.
func tokenFlags(access, id, userinfo, introspection bool) map[string]string {
	flag := func(on bool) string {
		if on {
			return "true"
		}
		return "false"
	}
	return map[string]string{
		AccessToken.Flag(): flag(access), IDToken.Flag(): flag(id),
		UserinfoResponse.Flag(): flag(userinfo), IntrospectionResponse.Flag(): flag(introspection),
	}
}

// withConfig adds entries to a config.
func withConfig(cfg map[string]string, kv ...string) map[string]string {
	for i := 0; i+1 < len(kv); i += 2 {
		cfg[kv[i]] = kv[i+1]
	}
	return cfg
}

// userClaim is a property or attribute mapper into every token, as
// Keycloak's profile, email and phone mappers are.
func userClaim(name, mapperType, attribute, claim, jsonType string) mapperTemplate {
	return mapperTemplate{name, mapperType, withConfig(tokenFlags(true, true, true, true),
		CfgUserAttribute, attribute, CfgClaimName, claim, CfgJSONType, jsonType)}
}

// roleClaim is a role mapper into the access token and introspection only,
// as Keycloak's roles scope has them.
func roleClaim(name, mapperType, claim string) mapperTemplate {
	return mapperTemplate{name, mapperType, withConfig(tokenFlags(true, false, false, true),
		CfgClaimName, claim, CfgJSONType, "String", CfgMultivalued, "true")}
}

// defaultClientScopes are Keycloak's built-in client scopes with their
// standard mappers, plus "openid", which Keycloak handles outside its scope
// table, so that a client can list it like any other.
func defaultClientScopes() []scopeTemplate {
	property := func(name, attribute, claim, jsonType string) mapperTemplate {
		return userClaim(name, MapperUserProperty, attribute, claim, jsonType)
	}
	attribute := func(name, attribute, claim, jsonType string) mapperTemplate {
		return userClaim(name, MapperUserAttribute, attribute, claim, jsonType)
	}
	address := tokenFlags(true, true, true, true)
	for _, f := range AddressFields {
		address[CfgAddressAttrPrefix+f.Key] = f.Attribute
	}
	return []scopeTemplate{
		{"openid", "OpenID Connect scope: marks a request as an OpenID Connect one", nil},
		{"profile", "OpenID Connect built-in scope: profile", []mapperTemplate{
			{"full name", MapperFullName, tokenFlags(true, true, true, true)},
			property("family name", "lastName", "family_name", "String"),
			property("given name", "firstName", "given_name", "String"),
			attribute("middle name", "middleName", "middle_name", "String"),
			attribute("nickname", "nickname", "nickname", "String"),
			property("username", "username", "preferred_username", "String"),
			attribute("profile", "profile", "profile", "String"),
			attribute("picture", "picture", "picture", "String"),
			attribute("website", "website", "website", "String"),
			attribute("gender", "gender", "gender", "String"),
			attribute("birthdate", "birthdate", "birthdate", "String"),
			attribute("zoneinfo", "zoneinfo", "zoneinfo", "String"),
			attribute("locale", "locale", "locale", "String"),
			attribute("updated at", "updatedAt", "updated_at", "long"),
		}},
		{"email", "OpenID Connect built-in scope: email", []mapperTemplate{
			property("email", "email", "email", "String"),
			property("email verified", "emailVerified", "email_verified", "boolean"),
		}},
		{"address", "OpenID Connect built-in scope: address", []mapperTemplate{
			{"address", MapperAddress, address},
		}},
		{"phone", "OpenID Connect built-in scope: phone", []mapperTemplate{
			attribute("phone number", "phoneNumber", "phone_number", "String"),
			attribute("phone number verified", "phoneNumberVerified", "phone_number_verified", "boolean"),
		}},
		{"offline_access", "OpenID Connect built-in scope: offline_access", nil},
		{"roles", "OpenID Connect scope for add user roles to the access token", []mapperTemplate{
			roleClaim("realm roles", MapperRealmRoles, "realm_access.roles"),
			roleClaim("client roles", MapperClientRoles, "resource_access.${client_id}.roles"),
			{"audience resolve", MapperAudienceRoles, map[string]string{
				AccessToken.Flag(): "true", IntrospectionResponse.Flag(): "true"}},
		}},
		{"web-origins", "OpenID Connect scope for add allowed web origins to the access token", []mapperTemplate{
			{"allowed web origins", MapperAllowedOrigins, map[string]string{
				AccessToken.Flag(): "true", IntrospectionResponse.Flag(): "true"}},
		}},
		{"microprofile-jwt", "Microprofile - JWT built-in scope", []mapperTemplate{
			property("upn", "username", "upn", "String"),
			{"groups", MapperRealmRoles, withConfig(tokenFlags(true, true, true, true),
				CfgClaimName, "groups", CfgJSONType, "String", CfgMultivalued, "true")},
		}},
		{"organization", "Additional claims about the organization a subject belongs to", []mapperTemplate{
			{"organization", MapperOrganization, withConfig(tokenFlags(true, true, true, true), CfgClaimName, "organization")},
		}},
	}
}

// Defaults are the client scopes a new realm starts with: Keycloak's
// default ones and their standard mappers, as records of realm.
func Defaults(realm *store.Realm) []*store.ClientScope {
	now := realm.CreatedAt
	var out []*store.ClientScope
	for _, t := range defaultClientScopes() {
		scope := &store.ClientScope{ID: uuid.NewString(), RealmID: realm.ID, Name: t.name, Description: t.description,
			Protocol: ProtocolOIDC, CreatedAt: now}
		for _, mt := range t.mappers {
			scope.Mappers = append(scope.Mappers, &store.ProtocolMapper{ID: uuid.NewString(), ScopeID: scope.ID,
				Name: mt.name, MapperType: mt.mapperType, Protocol: ProtocolOIDC, Config: mt.config, CreatedAt: now})
		}
		out = append(out, scope)
	}
	return out
}

// Seed gives a new realm its default client scopes, inside the transaction
// that creates the realm.
func Seed(ctx context.Context, tx *store.Store, realm *store.Realm) error {
	for _, scope := range Defaults(realm) {
		if err := tx.CreateClientScope(ctx, scope); err != nil {
			return fmt.Errorf("seed client scope %s: %w", scope.Name, err)
		}
	}
	return nil
}
