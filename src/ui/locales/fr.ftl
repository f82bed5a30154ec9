# Les pages d'Authrim en français.
language-name = Français

continue-to = pour continuer vers { $client }
login-for-organization = pour { $organization }, afin de continuer vers { $client }
signed-in-as = Connecté en tant que { $user }
continue = Continuer
cancel = Annuler
done = Terminé
back-to-account = Retour à votre compte
date-never = jamais

error-title = Erreur
error-heading = Cette demande ne peut pas aboutir
error-detail = Détails :
error-back = Revenez à l'application d'où vous venez et réessayez.
error-home = Aller à la page d'accueil
error-account = Aller à votre compte

login-title = Connexion
login-heading = Connexion
login-username = Nom d'utilisateur ou adresse e-mail
login-password = Mot de passe
login-submit = Se connecter
login-passkey = Se connecter avec une clé d'accès
passkey-not-used = La clé d'accès n'a pas été utilisée. Réessayez, ou utilisez un autre moyen.
passkey-name = Nom de cette clé d'accès
passkey-name-placeholder = Mon ordinateur portable

second-factor-title = Vérifiez votre identité
second-factor-heading = Vérifiez votre identité
second-factor-use-passkey = Utiliser une clé d'accès
second-factor-code = Code de votre application d'authentification, ou code de récupération
second-factor-submit = Vérifier

select-title = Choisir un compte
select-heading = Choisissez un compte
select-current = Continuer en tant que { $user }
select-other = Utiliser un autre compte

consent-title = Autoriser l'accès
consent-heading = Autoriser { $client } ?
consent-self-registered = « { $client } » s'est enregistrée elle-même auprès de ce service : son nom, son logo et ses liens sont les siens, et personne ici ne les a vérifiés.
consent-document-host = Cette application n'est pas enregistrée ici ; elle est identifiée par son adresse sur <strong>{ $host }</strong>.
consent-asks = { $client } demande à :
consent-resources = Avec accès à :
consent-allow = Autoriser
consent-deny = Refuser
consent-home = À propos de { $client }
consent-policy = Politique de confidentialité
consent-terms = Conditions d'utilisation
request-done-title = Demande traitée
request-done-heading = Cette demande est traitée
request-done-body-client = Vous avez déjà répondu à la demande de { $client } : la réponse a été transmise à l'application.
request-done-body = Vous avez déjà répondu à cette demande : la réponse a été transmise à l'application.
request-done-next = Pour utiliser l'application, revenez-y (cette page n'est plus utile). Pour voir ou retirer ce que vous avez autorisé, allez à votre compte.
request-done-to-client = Aller à { $client }
scope-openid = savoir qui vous êtes
scope-profile = voir votre nom et votre profil
scope-email = voir votre adresse e-mail
scope-address = voir votre adresse postale
scope-phone = voir votre numéro de téléphone
scope-offline_access = garder l'accès en votre absence

logout-title = Déconnexion
logout-heading = Se déconnecter de { $product } ?
logout-submit = Se déconnecter
logout-not-asked = Si vous n'avez pas demandé à vous déconnecter, fermez cette page : vous restez connecté.
signed-out-title = Déconnecté
signed-out-heading = Vous êtes déconnecté
signed-out-apps = Déconnexion de vos applications…
signed-out-close = Vous pouvez fermer cette page.
signed-out-sign-in-again = Se reconnecter

form-post-title = Retour à l'application
form-post-heading = Retour à l'application

landing-title = Bienvenue
landing-heading = Bienvenue
landing-intro = Ceci est un service de connexion OpenID Connect. Les applications vous y envoient pour vous connecter.
landing-demo-heading = Essayer
landing-demo-intro = Le mode démo est actif : une application de démonstration se connecte ici et affiche les jetons qu'elle reçoit et ce que userinfo dit de vous.
landing-demo = Ouvrir l'application de démonstration
landing-apps-heading = Applications
landing-links-heading = Où aller
landing-account = Votre compte : clés d'accès, applications d'authentification, codes de récupération
landing-console = Console d'administration : applications, utilisateurs, clés, journal d'audit
landing-discovery = Document de découverte (pour les développeurs)
landing-docs = Documentation : <code>README.md</code> et le dossier <code>docs/</code> du dépôt source d'Authrim

demo-title = Application de démonstration
demo-heading = Application de démonstration
demo-intro = Cette application tourne dans Authrim comme client <code>demo-client</code>. Elle se connecte comme toute application : elle vous envoie à la page de connexion avec un state, un nonce et PKCE, échange le code reçu au point de terminaison des jetons, vérifie le jeton d'identité et interroge userinfo, puis vous montre tout cela.
demo-credentials = Connectez-vous avec l'utilisateur de démonstration ; son nom et son mot de passe sont affichés dans le terminal où Authrim a démarré.
demo-sign-in = Se connecter à la démo
demo-signed-out = Vous êtes déconnecté. L'application de démonstration l'a demandé, et Authrim vous a renvoyé ici.
demo-back-home = Retour à la page d'accueil
demo-signed-in-title = Connecté à la démo
demo-signed-in-heading = Connecté à la démo
demo-signed-in-intro = L'application de démonstration a échangé son code d'autorisation au point de terminaison des jetons. Voici ce qu'elle a reçu.
demo-token-response = Réponse du point de terminaison des jetons
demo-id-token = Revendications du jeton d'identité
demo-access-token = Revendications du jeton d'accès
demo-userinfo = Réponse de userinfo
demo-claim = Revendication
demo-value = Valeur
demo-sign-out = Se déconnecter
demo-sign-in-again = Se reconnecter
passkeys-off-ip = Les clés d'accès sont désactivées : l'adresse de ce serveur ({ $issuer }) est une adresse IP, et les clés d'accès exigent un nom de domaine. Pour les activer, démarrez Authrim avec <code>AUTHRIM_ISSUER={ $suggest }</code> et ouvrez-le à cette adresse.
passkeys-off-disabled = Les clés d'accès sont désactivées sur ce serveur. Un administrateur peut les activer avec le réglage <code>passkeys = true</code> (<code>AUTHRIM_PASSKEYS=true</code>).

account-title = Votre compte
account-heading = Votre compte
account-methods = Moyens de connexion
factor-kind-passkey = Clé d'accès
factor-kind-totp = Application d'authentification
account-added = ajouté le { $date }
account-last-used = dernière utilisation { $date }
account-remove = Supprimer
account-remove-named = Supprimer { $name }
account-password-only = Vous vous connectez avec votre mot de passe seulement.
account-reauth-note = Vous vous êtes connecté il y a un moment : les modifications vous demanderont de vous reconnecter d'abord.
account-add-passkey = Ajouter une clé d'accès
account-add-totp = Ajouter une application d'authentification
account-recovery = Codes de récupération
account-recovery-left = { $count ->
    [0] Vous n'avez aucun code de récupération. Créez-en, pour pouvoir vous connecter si vous perdez vos autres moyens.
    [one] { $count } code de récupération inutilisé. Il vous connecte une fois si vous perdez vos autres moyens.
   *[other] { $count } codes de récupération inutilisés. Chacun vous connecte une fois si vous perdez vos autres moyens.
}
account-recovery-new = Créer de nouveaux codes de récupération
account-sign-out = Se déconnecter
notice-passkey = Votre clé d'accès a été ajoutée.
notice-totp = Votre application d'authentification a été ajoutée.
notice-removed = Le moyen de connexion a été supprimé.

account-password = Mot de passe
account-change-password = Changer votre mot de passe
notice-password = Votre mot de passe a été changé. Vos autres sessions ont été déconnectées.
password-title = Changer votre mot de passe
password-heading = Changer votre mot de passe
password-current = Mot de passe actuel
password-new = Nouveau mot de passe (au moins { $min } caractères)
password-confirm = Nouveau mot de passe, à nouveau
password-submit = Changer le mot de passe
password-mismatch = Les deux nouveaux mots de passe ne sont pas identiques.
password-current-wrong = Le mot de passe actuel n'est pas le bon.
password-too-weak = Le nouveau mot de passe doit compter de { $min } à 1024 caractères.

reauth-title = Reconnectez-vous
reauth-heading = Confirmez votre identité
reauth-body = Pour modifier vos moyens de connexion, reconnectez-vous d'abord (votre dernière connexion date de plus de { $minutes ->
    [one] { $minutes } minute
   *[other] { $minutes } minutes
}).
reauth-link = Se reconnecter
not-signed-in-title = Non connecté
not-signed-in-heading = Vous n'êtes pas connecté
not-signed-in-body = La connexion n'a pas abouti, ou son lien a déjà été utilisé.
not-signed-in-link = Se connecter à votre compte
failed-title = Rien n'a changé
failed-heading = Rien n'a été modifié
failed-passkey-expired = La clé d'accès n'a pas été ajoutée : la page a expiré. Réessayez.
failed-passkey-refused = La clé d'accès n'a pas été ajoutée : la réponse de votre appareil n'a pas pu être vérifiée, ou elle est déjà enregistrée.
failed-totp-expired = L'application d'authentification n'a pas été ajoutée : la page a expiré. Réessayez.
failed-recovery-download = Les codes ne peuvent plus être téléchargés : cette page a expiré. Créez de nouveaux codes de récupération et téléchargez-les aussitôt.

passkey-setup-title = Ajouter une clé d'accès
passkey-setup-heading = Ajouter une clé d'accès
passkey-setup-body = Votre appareil vous demandera de confirmer avec le verrouillage de l'écran, votre empreinte ou une clé de sécurité.
passkey-create = Créer la clé d'accès
passkey-needs-js = Les clés d'accès nécessitent JavaScript dans ce navigateur.
totp-title = Ajouter une application d'authentification
totp-heading = Ajouter une application d'authentification
totp-scan = Scannez ce code avec votre application d'authentification :
totp-qr-label = Code QR du secret pour votre application d'authentification
totp-type-key = Ou saisissez cette clé :
totp-code = Le code à 6 chiffres affiché par l'application
totp-name = Nom de cette application
totp-name-placeholder = Téléphone
totp-submit = Ajouter
totp-wrong = Ce code n'est pas le bon. Saisissez le code affiché en ce moment.
recovery-title = Codes de récupération
recovery-heading = Vos codes de récupération
recovery-body = Gardez-les en lieu sûr : chacun vous connecte une fois. Ils ne sont affichés que maintenant ; les codes précédents ne fonctionnent plus.

err-form-expired = Ce formulaire a expiré ou a déjà été utilisé. Revenez à l'application et reconnectez-vous.
login-expired = Cette page de connexion est restée ouverte trop longtemps et a été renouvelée. Connectez-vous de nouveau pour continuer vers l'application.
err-second-factor-expired = Ce formulaire a expiré. Revenez à l'application et reconnectez-vous.
err-too-many = Trop de tentatives de connexion échouées. Patientez quelques minutes et réessayez.
err-busy = Le service est occupé. Réessayez dans un instant.
err-unavailable = Le service est momentanément indisponible. Réessayez.
err-no-cookie = Votre navigateur n'a pas renvoyé le cookie dont ce formulaire a besoin. Autorisez les cookies pour ce site et réessayez.
err-client-gone = L'application qui vous a envoyé ici n'est plus enregistrée.
err-session-ended = Votre session a pris fin. Revenez à l'application et reconnectez-vous.
err-choose = Choisissez Autoriser ou Refuser.
err-choose-account = Choisissez le compte avec lequel continuer.
err-incorrect = Nom d'utilisateur ou mot de passe incorrect.
err-needs-passkey = Se connecter ici nécessite une clé d'accès. Utilisez l'une de vos clés, ou demandez à votre administrateur d'en configurer une.
err-needs-passkey-none = Se connecter ici nécessite une clé d'accès, et votre compte n'en a pas encore. Demandez à votre administrateur d'en configurer une, ou ajoutez-en une sur la page de votre compte.
err-needs-factor-none = Se connecter ici nécessite un second facteur (une clé d'accès ou une application d'authentification), et votre compte n'en a pas encore. Demandez à votre administrateur d'en configurer un, ou ajoutez-en un sur la page de votre compte.
err-second-factor-wrong = Cela n'a pas fonctionné : le code n'est pas le bon ou a déjà été utilisé, ou la clé d'accès a été refusée.
err-passkey-expired = La connexion par clé d'accès a expiré. Réessayez.
err-passkey-refused = Cette clé d'accès n'a pas permis de vous connecter. Réessayez, ou utilisez votre mot de passe.
err-bad-request = L'application a envoyé une demande de connexion inutilisable.
err-request-too-large = La demande est trop volumineuse.
err-not-found = Il n'y a pas de page à cette adresse.
err-method = Cette page ne s'utilise pas ainsi. Revenez en arrière et réessayez.
err-form-only = Cette adresse reçoit seulement le formulaire de connexion. Pour vous connecter à une application, recommencez depuis l'application.
err-no-client = La demande ne nomme aucune application (client_id manquant).
err-request-uri-used = Ce lien de connexion a expiré ou a déjà été utilisé. Revenez à l'application et recommencez.
err-bad-redirect = L'adresse de retour n'est pas valide.
err-form-not-post = Cette page doit être atteinte par l'envoi d'un formulaire.
err-form-unreadable = Le formulaire est trop volumineux ou illisible.
err-logout-unreadable = Le formulaire de déconnexion est illisible.
err-logout-expired = Ce formulaire de déconnexion a expiré ou n'a pas été fait pour ce navigateur. Réessayez.
err-logout-invalid = Cette demande de déconnexion est inutilisable.
err-account-form-expired = Ce formulaire a expiré. Rechargez la page de votre compte et réessayez.
err-account-form-unreadable = Ce formulaire est illisible. Rechargez la page de votre compte et réessayez.
err-demo-query = La chaîne de requête du retour est mal formée.
err-demo-failed = L'autorisation a échoué.
err-demo-no-code = Cette page attend un code d'autorisation émis par ce serveur.
err-demo-no-request = Cette connexion n'a pas été lancée par l'application de démonstration d'ici, ou elle est terminée. Recommencez depuis la page de la démo.
err-demo-state = Le state de cette réponse n'est pas celui que l'application de démonstration a envoyé. Recommencez depuis la page de la démo.
err-demo-token = Le point de terminaison des jetons a refusé le code de l'application de démonstration, ou son jeton d'identité n'a pas passé les vérifications.
err-demo-userinfo = userinfo a refusé le jeton d'accès de l'application de démonstration.

# La console d'administration.
copy = Copier
copied = Copié
console-title = Console d'administration
console-heading = Console d'administration
console-nav = Console
console-home = Vue d'ensemble
console-clients = Clients
console-users = Utilisateurs
console-keys = Clés de signature
console-audit = Journal d'audit
console-role-admin = administrateur
console-role-auditor = auditeur (lecture seule)
console-sign-in = Se connecter à la console
console-denied-heading = Pas d'accès à la console
console-denied = { $user } n'a pas de rôle dans la console. Un administrateur peut en donner un sur la page de l'utilisateur, ou avec <code>authrim user update NOM --role admin</code>.
console-needs-factor-heading = Ajoutez d'abord un second facteur
console-needs-factor = La console demande un second facteur (une clé d'accès ou une application d'authentification). Ajoutez-en un sur la page de votre compte, puis revenez.
console-go-account = Aller à votre compte
console-read-only-heading = Lecture seule
console-read-only = Votre rôle permet de consulter, pas de modifier.
console-refused-heading = Non effectué
console-refused = Ceci n'a pas été effectué :
console-not-found-heading = Introuvable
console-not-found = Il n'y a rien ici : l'élément a peut-être été supprimé.
console-delete-self = Vous ne pouvez pas vous supprimer vous-même ; demandez à un autre administrateur.
console-done-created = Créé.
console-done-saved = Enregistré.
console-done-deleted = Supprimé.
console-done-ended = Sessions terminées.
console-done-removed = Retiré.
console-done-rotated = Rotation commencée : la nouvelle clé est publiée et signera après le délai de publication.
console-count-clients = { $count ->
    [one] client
   *[other] clients
}
console-count-users = { $count ->
    [one] utilisateur
   *[other] utilisateurs
}
console-count-algs = { $count ->
    [one] algorithme de signature
   *[other] algorithmes de signature
}
console-recent = Événements récents
console-audit-all = Tout le journal d'audit
console-no-events = Aucun événement.
console-col-time = Heure
console-col-event = Événement
console-col-user = Utilisateur
console-col-client = Client
console-col-address = Adresse
console-col-detail = Détail
console-col-client-id = Identifiant du client
console-col-name = Nom
console-col-method = Authentification du client
console-col-grants = Types d'autorisation
console-response-types = Jetons du point d'autorisation (hybride et implicite)
console-response-types-hint = Seulement pour les applications qui en ont besoin : la RFC 9700 déconseille de renvoyer des jetons dans le navigateur. Les types avec un code demandent aussi l'autorisation de connexion.
console-col-created = Créé
console-col-username = Nom d'utilisateur
console-col-email = Adresse e-mail
console-col-roles = Rôles
console-col-status = État
console-col-signed-in = Connexion
console-col-how = Méthodes
console-col-agent = Navigateur
console-col-clients = Applications
console-col-alg = Algorithme
console-col-state = État
console-col-activated = Signe depuis
console-col-retired = Retirée
console-no-clients = Aucun client pour l'instant.
console-client-new = Nouveau client
console-client-title = Client
console-client-heading = Client { $id }
console-client-metadata = Enregistrement
console-client-id-hint = Laissez vide pour en générer un.
console-redirect-uris = URI de redirection
console-one-per-line = Une par ligne, comparées exactement.
console-logout-uris = URI de redirection après déconnexion
console-scope = Portées qu'il peut demander
console-jwks-uri = URL du JWK Set (pour private_key_jwt)
console-backchannel-uri = URL de déconnexion back-channel
console-initiate-login-uri = URL de début de connexion (https)
console-initiate-login-uri-hint = L'adresse où l'application lance elle-même une connexion (connexion initiée par un tiers, OpenID Connect) ; elle figure alors sur la page d'accueil et sur la page de compte de ses utilisateurs.
console-refresh-grace = Délai de réutilisation du jeton de rafraîchissement (secondes)
console-refresh-grace-hint = Pendant ce délai, une nouvelle tentative avec le jeton de rafraîchissement qui vient d’être remplacé reçoit le même nouveau jeton (applications ouvertes dans plusieurs onglets). 0 : jamais (toute réutilisation déconnecte l’utilisateur partout). Vide : le réglage du serveur.
console-sign-in-policy = Politique de connexion
console-require-mfa = Exiger un second facteur
console-require-passkey = Exiger une clé d'accès
console-create = Créer
console-save = Enregistrer
console-danger = Irréversible
console-rotate-secret = Nouveau secret
console-delete-client = Supprimer ce client
console-back-clients = Retour aux clients
console-client-created = Client créé
console-secret-title = Secret du client
console-secret-heading = Nouveau secret du client
console-secret-once = Copiez le secret maintenant : il n'est affiché qu'une fois et ne peut pas être relu. L'ancien secret ne fonctionne plus.
console-secret-done = Je l'ai copié
console-search-users = Chercher par nom d'utilisateur, e-mail ou identifiant
console-search = Chercher
console-users-shown = { $shown } affichés sur { $total }.
console-user-new = Nouvel utilisateur
console-user-title = Utilisateur
console-user-heading = Utilisateur { $user }
console-user-id = Identifiant (sub) : { $id }
console-updated = modifié le { $date }
console-user-profile = Profil
console-email-verified = Adresse e-mail vérifiée
console-password = Mot de passe
console-password-hint = Au moins 8 caractères.
console-new-password = Nouveau mot de passe
console-new-password-hint = Laissez vide pour garder l'actuel.
console-user-disabled = Désactivé (ne peut pas se connecter ; ses sessions prennent fin)
console-disabled = désactivé
console-active = actif
console-factors = Seconds facteurs
console-no-factors = Aucun.
console-reset-factors = Retirer tous les facteurs et codes de récupération
console-sessions = Sessions
console-no-sessions = Aucune session en cours.
console-end-session = Terminer
console-end-session-at = Terminer la session ouverte le { $date }
console-end-all = Terminer toutes les sessions
console-user-events = Les événements de cet utilisateur
console-delete-user = Supprimer cet utilisateur
console-back-users = Retour aux utilisateurs
console-keys-intro = Une rotation publie aussitôt une nouvelle clé ; elle signe après { $minutes } minutes, et l'ancienne reste publiée jusqu'à l'expiration de ses jetons.
console-key-active = signe
console-key-next = publiée, ne signe pas encore
console-key-retired = retirée
console-rotate = Faire tourner une clé
console-rotate-submit = Commencer une rotation
console-filter-user = Utilisateur (nom, adresse e-mail ou identifiant)
console-filter-client = Client (identifiant ou nom)
console-filter-since = Depuis (jour)
console-filter-limit = Au plus
console-filter = Filtrer
console-col-actor = Par
console-all-events = Tous les événements
console-actor-token = jeton de l'API d'administration
console-actor-cli = ligne de commande
console-actor-bootstrap = premier démarrage (bootstrap_admin)
console-actor-server = Authrim
console-no-such-user = Aucun utilisateur ne s'appelle « { $user } » (nom, adresse e-mail ou identifiant), et aucun événement ne porte cet identifiant.
console-no-such-client = Aucun client n'a l'identifiant ou le nom « { $client } », et aucun événement ne porte cet identifiant.
console-no-such-event = « { $event } » n'est pas un type d'événement qu'Authrim enregistre.
console-bad-day = Le jour n'est pas une date (AAAA-MM-JJ) ; il a été ignoré.
console-secret-once-new = Copiez le secret maintenant : il n'est affiché qu'une fois et ne peut pas être relu.
console-type-question = Quel type d'application est-ce ?
console-type-web = Application web
console-type-web-hint = Tourne sur un serveur et garde un secret (un site classique, un back end pour front end).
console-type-spa = Application monopage
console-type-spa-hint = Du JavaScript dans le navigateur : pas de secret, PKCE, appelle le point de jeton depuis sa propre origine.
console-type-native = Application native ou mobile
console-type-native-hint = Installée sur un téléphone ou un ordinateur : pas de secret, PKCE, revient par son propre schéma ou un port local.
console-type-m2m = Machine à machine
console-type-m2m-hint = Un service qui appelle des API en son nom, sans utilisateur : un secret et l'octroi client credentials.
console-type-mcp = Client MCP ou agent
console-type-mcp-hint = Un agent d'IA ou un client MCP agissant pour un utilisateur : pas de secret, PKCE, une redirection locale ou https, des jetons d'actualisation.
console-continue = Continuer
console-type-chosen = Type : { $type }.
console-type-change = Choisir un autre type
console-redirect-hint-web = Utilisez des adresses https (http seulement sur localhost pendant le développement).
console-redirect-hint-spa = Utilisez les adresses https des pages qui connectent (http seulement sur localhost pendant le développement) ; leurs origines peuvent appeler le point de jeton.
console-redirect-hint-native = Utilisez le schéma propre de l'application (com.example.app:/callback), un port local (http://127.0.0.1/callback, tout port convient) ou https.
console-redirect-hint-mcp = Utilisez un port local (http://127.0.0.1/callback, tout port convient), le schéma propre de l'application ou https.
console-advanced = Réglages avancés
console-grant-code = Connecter des utilisateurs
console-grant-refresh = Garder les utilisateurs connectés (jetons d'actualisation)
console-grant-client-credentials = Appeler des API en son nom, sans utilisateur
console-grant-token-exchange = Échanger des jetons pour d'autres API
console-method-client_secret_basic = Secret, dans l'en-tête Authorization
console-method-client_secret_post = Secret, dans le corps de la requête
console-method-client_secret_jwt = Un JWT signé avec le secret
console-method-private_key_jwt = Un JWT signé avec la clé privée de l'application
console-method-none = Aucune : une application publique, avec PKCE
console-scope-hint = Séparées par des espaces : openid, profile, email, offline_access et les portées de vos API.
console-created-public = Cette application n'a pas de secret : elle prouve son identité par PKCE à chaque connexion.
console-issuer = Émetteur (issuer)
console-discovery = Document de découverte
console-client-secret = Secret du client
console-settings-heading = Les réglages de l'application
console-settings-hint = En variables d'environnement, pour la bibliothèque OpenID Connect de l'application :
console-copy-settings = Copier les réglages
console-go-client = Aller à la page du client
console-uri-spaces = « { $uri } » contient des espaces ou des caractères de contrôle : une adresse par ligne, sans espaces.
console-uri-not-absolute = « { $uri } » n'est pas une adresse complète : écrivez-la avec son schéma et son hôte, par exemple https://app.example/callback.
console-uri-fragment = « { $uri } » a une partie #, qu'une adresse de redirection ne peut pas avoir.
console-uri-userinfo = « { $uri } » a un nom d'utilisateur ou un mot de passe avant l'hôte, ce qu'une adresse ici ne peut pas avoir.
console-uri-http = « { $uri } » utilise http, que seules les adresses de cet ordinateur (localhost, 127.0.0.1) peuvent utiliser : utilisez https.
console-uri-scheme = « { $uri } » utilise un schéma non autorisé : utilisez https, http sur localhost ou le schéma propre de l'application (com.example.app:/callback).
console-uri-web-only = « { $uri } » n'est pas une adresse web : ce type d'application revient à des adresses https (http seulement sur localhost).
console-err-client-id = Un identifiant de client compte au plus 128 caractères imprimables, sans espaces, « : » ni « % ».
console-err-client-id-taken = Un autre client a déjà cet identifiant.
console-err-name = Le nom tient sur une ligne, en 200 caractères au plus.
console-err-no-redirects = Un client machine à machine ne connecte aucun utilisateur et n'a donc pas d'adresse de redirection : laissez-les vides.
console-err-no-grants = Choisissez au moins une façon pour l'application d'obtenir des jetons.
console-err-needs-redirect = Une application qui connecte des utilisateurs a besoin d'au moins une URI de redirection : l'adresse où ils reviennent après la connexion.
console-err-public-grant = Une application sans secret ne peut ni appeler des API en son nom ni échanger des jetons : choisissez une authentification par secret ou par clé.
console-err-needs-keys = L'authentification par clé privée demande l'URL du JWK Set où l'application publie sa clé publique.
console-err-scope = « { $scope } » n'est pas une portée : les portées sont séparées par des espaces, sans guillemets ni barres obliques inverses.
console-err-grace = Le délai de réutilisation est un nombre entier de secondes, de 0 à { $max }.
console-err-other = La raison donnée par le serveur :
console-recovery-left = { $count ->
    [0] Aucun code de récupération.
    [one] Un code de récupération restant.
   *[other] { $count } codes de récupération restants.
}
err-console-form-expired = Ce formulaire a expiré ou n'a pas été envoyé depuis votre session de console. Rechargez la page de la console et réessayez.

# Fournisseurs d'identité en amont.
login-with = Se connecter avec { $name }
err-upstream-unknown = Ce mode de connexion n'est pas proposé ici.
err-upstream-state = Cette connexion a expiré ou a été commencée dans un autre navigateur. Retournez à l'application et réessayez.
err-upstream-unavailable = { $name } est injoignable pour le moment. Réessayez dans un instant, ou connectez-vous autrement.
err-upstream-cancelled = La connexion avec { $name } n'a pas abouti.
err-upstream-refused = La réponse de { $name } n'est pas digne de confiance : vous n'êtes pas connecté.
err-upstream-domain = Votre compte { $name } n'est pas de ceux que ce service accepte.
err-upstream-disabled = Le compte lié à cette connexion est désactivé.
err-upstream-no-account = Aucun compte ici n'est lié à votre compte { $name }. Connectez-vous avec votre mot de passe, puis liez-le depuis la page de votre compte.
err-upstream-email-taken = Un compte utilise déjà cette adresse e-mail ici. Connectez-vous-y avec votre mot de passe, puis liez votre compte { $name } depuis la page de votre compte.
err-upstream-linked-elsewhere = Ce compte { $name } est lié à un autre utilisateur.
err-upstream-already-linked = Votre compte est déjà lié à un compte { $name }. Retirez d'abord ce lien.
err-directory-unreachable = L'annuaire qui contient votre compte est injoignable pour le moment. Réessayez dans un instant.
err-directory-name-taken = Un compte utilise déjà ce nom ou cette adresse ici, votre compte d'annuaire ne peut donc pas être ajouté. Adressez-vous à votre administrateur.
err-directory-password-read-only = Votre mot de passe est géré par l'annuaire de votre organisation et ne peut pas être changé ici. Changez-le là où votre organisation gère les mots de passe.
err-directory-link-kept = Votre compte vient de l'annuaire de votre organisation : ce lien ne peut pas être retiré.
account-linked = Comptes liés
account-link = Lier
account-link-named = Lier votre compte { $name }
account-unlink = Retirer
account-unlink-named = Retirer le lien avec { $name }
notice-linked = Le compte a été lié : vous pouvez vous connecter avec.
notice-unlinked = Le lien a été retiré.
account-profile = Profil
account-edit-profile = Changer votre nom, votre adresse e-mail et votre langue
profile-title = Votre profil
profile-heading = Votre profil
profile-name = Nom complet
profile-given-name = Prénom
profile-family-name = Nom de famille
profile-email = Adresse e-mail
profile-email-hint = Une nouvelle adresse est présentée aux applications comme non vérifiée.
profile-locale = Langue et région
profile-locale-hint = Une étiquette de langue comme fr-FR ou ja-JP ; les applications peuvent s'en servir.
profile-submit = Enregistrer
profile-too-long = Un champ dépasse 256 caractères ou contient des caractères de contrôle.
profile-email-invalid = Ce n'est pas une adresse e-mail.
profile-email-taken = Un autre compte se connecte avec cette adresse e-mail.
profile-invalid = Ce profil ne peut pas être enregistré :
notice-profile = Votre profil a été enregistré.

# Réinitialisation du mot de passe.
login-forgot = Mot de passe oublié ?
forgot-title = Réinitialiser votre mot de passe
forgot-heading = Réinitialiser votre mot de passe
forgot-intro = Saisissez votre nom d'utilisateur ou votre adresse e-mail. Si le compte existe, nous envoyons à son adresse un lien pour choisir un nouveau mot de passe.
forgot-submit = Envoyer le lien
forgot-sent = Si un compte porte ce nom, un lien pour choisir un nouveau mot de passe est en route vers son adresse e-mail.
forgot-sent-note = Le lien ne sert qu'une fois, et peu de temps. Rien reçu ? Regardez dans les indésirables, ou demandez à votre administrateur.
reset-title = Choisir un nouveau mot de passe
reset-heading = Choisir un nouveau mot de passe
reset-submit = Enregistrer le mot de passe
reset-done = Votre mot de passe a été changé et toutes les sessions de votre compte ont été déconnectées. Retournez à l'application et connectez-vous avec le nouveau mot de passe.
err-reset-link = Ce lien ne fonctionne pas : il a déjà servi, ou il a expiré. Demandez-en un nouveau depuis la page de connexion.
err-reset-off = La réinitialisation du mot de passe n'est pas disponible ici. Demandez à votre administrateur.
mail-reset-subject = Réinitialisation de votre mot de passe { $product }
mail-reset-body = Quelqu'un a demandé à réinitialiser le mot de passe de votre compte { $product }. Pour en choisir un nouveau, ouvrez ce lien dans les { $minutes } minutes :

    { $link }

    Si ce n'était pas vous, ignorez ce message : votre mot de passe ne change pas.

# Inscription.
login-no-account = Pas encore de compte ?
login-signup = En créer un
signup-title = Créer un compte
signup-heading = Créer un compte
signup-username = Nom d'utilisateur
signup-field-email = Adresse e-mail
signup-field-name = Nom complet
signup-field-given_name = Prénom
signup-field-family_name = Nom de famille
signup-optional = (facultatif)
signup-password-hint = Au moins { $min } caractères ; ni votre nom d'utilisateur, ni un mot de passe connu d'une fuite.
signup-submit = Créer le compte
signup-sent = Presque fini : ouvrez le lien envoyé à votre adresse e-mail pour terminer. Il ne fonctionne que pour un temps limité.
signup-done = Votre compte est prêt. Retournez à l'application et connectez-vous.
signup-to-account = Aller à votre compte
signup-verify-heading = Confirmer votre adresse e-mail
signup-verify-submit = Confirmer et créer mon compte
signup-missing = Un champ obligatoire est vide : { $field }.
signup-password-length = Le mot de passe doit compter de { $min } à 1024 caractères.
signup-username-taken = Ce nom d'utilisateur ne peut pas être utilisé. Choisissez-en un autre.
password-is-username = Le mot de passe ne doit pas être votre nom d'utilisateur.
password-breached = Ce mot de passe est connu d'une fuite de données. Choisissez-en un autre.
err-signup-off = La création de compte n'est pas disponible ici.
err-signup-link = Ce lien ne fonctionne pas : il a déjà servi, ou il a expiré. Inscrivez-vous à nouveau.
mail-verify-subject = Confirmez votre adresse e-mail pour { $product }
mail-verify-body = Pour terminer la création de votre compte { $product }, ouvrez ce lien dans les { $hours } heures :

    { $link }

    Si ce n'était pas vous, ignorez ce message : aucun compte n'est créé.
signup-password-wrong = Ce n'est pas le mot de passe choisi pour cette inscription.
mail-signup-exists-subject = Quelqu'un a essayé de créer un compte { $product } avec votre adresse
mail-signup-exists-body = Quelqu'un a essayé de créer un nouveau compte { $product } avec cette adresse e-mail, qui en a déjà un (nom d'utilisateur : { $username }). Aucun compte n'a été créé et rien n'a changé.

    Si c'était vous, connectez-vous avec ce compte. Si vous avez oublié son mot de passe, vous pouvez en choisir un nouveau ici :

    { $link }

    Si ce n'était pas vous, ignorez ce message.
signup-verify-username-taken = Le nom d'utilisateur { $username } a été pris avant votre confirmation. Choisissez-en un autre et saisissez le mot de passe que vous aviez choisi pour créer votre compte.
err-signup-email-taken = Cette adresse e-mail a déjà un compte. Connectez-vous avec lui, ou choisissez un nouveau mot de passe depuis la page de connexion.
err-too-many-requests = Trop de demandes depuis cet endroit. Patientez quelques minutes et réessayez.
account-email = Adresse e-mail : { $email }
account-email-verified = (vérifiée)
account-email-unverified = (non vérifiée)
account-send-verification = Envoyer un lien de vérification
profile-email-hint-mail = Une nouvelle adresse est présentée aux applications comme non vérifiée jusqu’à ce que vous ouvriez le lien que nous y envoyons.
notice-profile-verify = Votre profil a été enregistré. Ouvrez le lien envoyé à votre nouvelle adresse e-mail pour la vérifier.
notice-verify-sent = Un lien de vérification a été envoyé à votre adresse e-mail.
# The account page: where the user is signed in, the applications they allowed.
account-sessions = Où vous êtes connecté
account-sessions-intro = Chaque navigateur ou appareil connecté à votre compte. Le déconnecter ici met fin à sa session, et les applications auxquelles il vous a connecté perdent ce qu'elles ont obtenu par elle.
account-device = { $browser } sur { $system }
account-device-unknown = Navigateur inconnu
account-session-this = Ce navigateur
account-session-address = depuis { $address }
account-session-signed-in = connecté le
account-session-seen = vu le
account-session-end = Déconnecter
account-session-end-named = Déconnecter { $device }, connecté le { $date }
notice-session-ended = Cette session a été déconnectée.
account-applications = Applications autorisées
account-applications-intro = Ces applications peuvent utiliser votre compte comme indiqué. Retirer l'accès fait redemander l'application la prochaine fois et met fin à son accès de longue durée.
account-application-allowed = autorisée le
account-application-withdraw = Retirer
account-application-withdraw-named = Retirer l'accès de { $name }
account-no-applications = Vous n'avez encore autorisé aucune application.
notice-withdrawn = L'accès a été retiré. L'application vous le redemandera.
# Recovery codes: download and print, and the downloaded file's words.
recovery-download = Télécharger
recovery-print = Imprimer
recovery-file-heading = Codes de récupération de { $user } sur { $issuer }
recovery-file-made = Créés le { $date }
recovery-file-body = Chaque code vous connecte une fois, quand vos autres moyens de connexion ne sont pas à portée de main. Gardez ce fichier en lieu sûr.
verify-email-title = Vérifier votre adresse e-mail
verify-email-submit = Confirmer mon adresse e-mail
verify-email-done-heading = Adresse e-mail vérifiée
verify-email-done = Votre adresse e-mail est vérifiée.
err-verify-email-link = Ce lien ne fonctionne pas : il a déjà servi, il a expiré, ou l’adresse a changé depuis. Envoyez-en un nouveau depuis la page de votre compte.
mail-verify-email-subject = Vérifiez votre adresse e-mail pour { $product }
mail-verify-email-body = Pour vérifier cette adresse e-mail pour votre compte { $product }, ouvrez ce lien dans les { $hours } heures :

    { $link }

    Si ce n’était pas vous, ignorez ce message : rien ne change.
mail-email-changed-subject = L’adresse e-mail de votre compte { $product } a été changée
mail-email-changed-body = L’adresse e-mail de votre compte { $product } { $username } est passée de celle-ci à { $new_email }.

    Si c’était vous, il n’y a rien à faire. Sinon, réinitialisez votre mot de passe et contactez les responsables de { $product } : quelqu’un d’autre utilise peut-être votre compte.
mail-factor-locked-subject = Les connexions à votre compte { $product } sont suspendues
mail-factor-locked-body = Quelqu’un s’est connecté à votre compte { $product } { $username } avec son mot de passe, puis a saisi trop de codes erronés de votre application d’authentification ou de vos codes de récupération. Les codes sont refusés pendant les { $minutes } prochaines minutes.

    Si c’était vous, patientez puis réessayez, ou connectez-vous avec une clé d’accès si vous en avez une. Sinon, quelqu’un connaît votre mot de passe : réinitialisez-le maintenant, et contactez les responsables de { $product } si vous ne le pouvez pas.

## La page de vérification des appareils (RFC 8628 : une télévision, une ligne de commande ou un agent demande à se connecter)
device-title = Connecter un appareil
device-heading = Connecter un appareil
device-enter = Saisissez le code affiché par votre appareil.
device-code-label = Code
device-continue = Continuer
device-code-malformed = Ce n'est pas un code du type qu'affichent les appareils : 8 lettres, comme BCDF-GHJK.
device-code-unknown = Ce code n'est pas reconnu ou a expiré. Comparez-le avec l'écran de votre appareil, ou recommencez sur l'appareil.
device-code-too-many = Trop de codes erronés. Patientez quelques minutes puis réessayez.
device-confirm-heading = Connecter { $client } ?
device-compare = Vérifiez que c'est bien le code affiché par votre appareil :
device-warning = N'autorisez que si vous venez de lancer cette connexion sur un appareil à vous. Quelqu'un qui vous aurait envoyé ce code pourrait accéder à votre compte.
device-approved-heading = Appareil connecté
device-approved = { $client } est autorisé. Revenez à votre appareil : il continue tout seul.
device-denied-heading = Demande refusée
device-denied = { $client } n'a pas été autorisé. Votre appareil l'indiquera.
err-device-form-expired = Ce formulaire a expiré. Saisissez à nouveau le code de votre appareil.
err-device-request-gone = Cette demande de l'appareil n'attend plus de réponse : elle a expiré ou a déjà reçu une réponse. Recommencez sur l'appareil.
err-device-not-signed-in = La connexion n'a pas abouti. Ouvrez l'adresse affichée par votre appareil et réessayez.
err-device-needs-stronger = Cette application demande une connexion plus forte (un second facteur ou une clé d'accès). Saisissez à nouveau le code et connectez-vous avec.
console-type-device = Appareil sans navigateur
console-type-device-hint = Une télévision, une ligne de commande ou un autre appareil qui affiche un code : pas de secret, pas de redirection ; l'utilisateur se connecte sur un autre écran (autorisation d'appareil).
console-grant-device = Connecter les utilisateurs sur un autre écran (code d'appareil)
console-grant-ciba = Laisser les utilisateurs approuver sur la page de leur compte une connexion demandée par une application (CIBA, poll)
console-created-public-device = Cette application n'a pas de secret : elle se désigne par son identifiant client, et ses utilisateurs se connectent sur un autre écran avec le code qu'elle affiche.

## Demandes de connexion sur la page du compte (CIBA)
account-requests = Demandes de connexion
account-requests-intro = Des applications vous demandent d'approuver une connexion qu'elles ont commencée ailleurs (un centre d'appel, un terminal, un autre appareil). N'approuvez que si vous l'avez commencée et que le message correspond à ce que vous y voyez.
account-request-binding = Message : { $message }
account-request-asked = Demandée
account-request-until = Expire
account-request-approve = Approuver
account-request-approve-named = Approuver la demande de connexion de { $name }
account-request-deny = Refuser
account-request-deny-named = Refuser la demande de connexion de { $name }
notice-request-approved = La demande de connexion a été approuvée : l'application est connectée.
notice-request-denied = La demande de connexion a été refusée.
account-user-code = Code des demandes de connexion
account-user-code-intro = Certaines applications (un centre d'appel, le terminal d'un magasin) doivent donner ce code quand elles vous demandent d'approuver une connexion ici. Ne le confiez qu'à celles en qui vous avez confiance ; une demande sans lui est refusée.
account-user-code-is-set = Vous avez défini un code.
account-user-code-not-set = Vous n'avez pas défini de code.
account-user-code-new = Nouveau code (4 à 64 caractères)
account-user-code-save = Enregistrer le code
account-user-code-remove = Supprimer le code
notice-user-code = Votre code des demandes de connexion a été enregistré.
notice-user-code-removed = Votre code des demandes de connexion a été supprimé.
notice-user-code-invalid = Le code doit compter de 4 à 64 caractères, sans saut de ligne. Rien n'a été modifié.
err-ciba-needs-stronger = Cette application demande une connexion plus forte (un second facteur ou une clé d'accès). Déconnectez-vous, reconnectez-vous avec, puis approuvez la demande.
err-ciba-push-failed = Votre réponse n'a pas pu être préparée pour l'application. Rien n'a été enregistré ; réessayez dans un instant.
mail-ciba-subject = Une application vous demande d'approuver une connexion à { $product }
mail-ciba-body = { $client } vous demande d'approuver une connexion avec votre compte { $product }. { $binding }

    Pour l'approuver ou la refuser, ouvrez la page de votre compte :

    { $link }

    Si vous ne l'avez pas commencée, refusez-la : rien n'est partagé avant votre accord.
mail-ciba-binding = Son message : « { $message } ».

# Locataires (console du déploiement seulement)
console-tenants = Locataires
console-tenants-intro = Chaque locataire est un émetteur à part entière, avec ses propres clés, applications, utilisateurs et pages de connexion. Les applications et les utilisateurs d’un locataire se gèrent dans sa propre console, à son émetteur suivi de /console.
console-col-slug = Identifiant
console-col-issuer = Émetteur
console-col-actions = Actions
console-tenant-active = Actif
console-tenant-disabled = Désactivé
console-tenant-deleting = Suppression en cours
console-tenant-deleted = Supprimé
console-tenant-disable = Désactiver
console-tenant-enable = Activer
console-tenant-delete = Supprimer avec toutes ses données
console-tenant-confirm = Saisissez { $slug } pour le supprimer
console-tenant-new = Nouveau locataire
console-tenant-slug = Identifiant
console-tenant-slug-help = Son nom dans les URL : lettres minuscules, chiffres et tirets. Il ne change jamais et n’est jamais redonné.
console-tenant-host = Son propre hôte (facultatif)
console-tenant-name = Nom affiché sur ses pages (facultatif)
console-tenant-settings-title = Réglages du locataire
console-tenant-settings = Réglages de { $slug }
console-tenant-settings-intro = Ce que ce locataire règle autrement que le déploiement. Un champ vide, ou « Celui du déploiement », garde la valeur du déploiement.
console-tenant-pages = Ses pages
console-tenant-sign-in = Connexion et inscription
console-tenant-deployments = Celui du déploiement
console-tenant-locale = Langue par défaut
console-tenant-css = Feuille de style
console-tenant-css-help = Ajoutée après celle du déploiement, sur les pages de ce locataire seulement. Le plus simple est de régler les variables prévues : :root { "{" } --accent: #0b7a55; --bg: #eef6f1; { "}" } Ici 8 192 caractères au plus ; une plus grande avec : authrim tenant set SLUG --css FICHIER
console-tenant-css-elsewhere = { $bytes } octets, définie avec la CLI ou l’API d’administration (trop longue pour ce formulaire) ; conservée à l’enregistrement.
console-tenant-css-remove = Supprimer sa feuille de style
console-tenant-logo = Logo
console-tenant-logo-set = { $kind }, { $bytes } octets.
console-tenant-logo-none = celui du déploiement.
console-tenant-logo-cli = Un logo (fichier .svg ou .png) s'envoie avec : authrim tenant set { $slug } --logo FICHIER
console-tenant-logo-remove = Retirer son logo
console-tenant-password-min = Mot de passe le plus court (8 à 1024)
console-tenant-mfa = Second facteur
console-tenant-mfa-optional = Facultatif
console-tenant-mfa-required = Exigé à chaque connexion
console-tenant-mfa-passkey = Une clé d'accès à chaque connexion
console-tenant-signup = Inscription libre
console-tenant-on = Activée
console-tenant-off = Désactivée
console-tenant-mail-from = Expéditeur des courriels (Nom &lt;adresse&gt;)
console-tenant-api-only = Ses propres fournisseurs d'identité ({ $upstreams }) et serveurs de ressources ({ $resources }) se règlent avec l'API d'administration ou authrim tenant set --settings-file.

# Organisations et identifiants d'administration dans la console
console-role-org-admin = administrateur d'organisation
console-organizations = Organisations
console-org-only-heading = Hors de vos organisations
console-org-only = Votre accès à la console porte sur les membres des organisations que vous administrez, rien d'autre.
console-orgs-intro = Les entreprises clientes de vos applications : leurs membres (avec des rôles d'organisation), leurs domaines de messagerie et, au besoin, leur propre fournisseur d'identité.
console-orgs-intro-org-admin = Les organisations que vous administrez : ajoutez et retirez leurs membres, et fixez leurs rôles.
console-no-orgs = Aucune organisation pour l'instant.
console-org-new = Nouvelle organisation
console-org-slug-help = Son nom dans les URL et les jetons (organization=, org_name) : lettres minuscules, chiffres et tirets.
console-org-logo = Logo (URL https, facultatif)
console-org-domains = Domaines de messagerie
console-org-domains-help = Un par ligne. Un utilisateur dont l'adresse vérifiée est dans l'un d'eux devient membre à sa prochaine connexion : ne donnez que des domaines que l'entreprise contrôle.
console-org-upstream = Connexion
console-org-upstream-none = Aucune (la connexion du tenant)
console-org-upstream-help = Le fournisseur d'identité de ses membres : une connexion pour l'organisation y va directement.
console-org-heading = Organisation { $org }
console-org-settings = Réglages
console-org-settings-tenant = Les domaines et la connexion sont fixés par les administrateurs du tenant.
console-org-members = Membres
console-org-roles-help = Rôles séparés par des espaces ; les applications les reçoivent dans la revendication org_roles. Le rôle admin fait du membre un administrateur de cette organisation dans la console.
console-org-joined = Membre depuis
console-org-roles-of = Rôles de { $user }
console-org-remove-named = Retirer { $user }
console-org-no-members = Aucun membre pour l'instant.
console-org-add-member = Ajouter un membre
console-org-member-user = Nom d'utilisateur ou adresse e-mail (exacts)
console-org-member-roles-help = Facultatif, séparés par des espaces. Ajouter quelqu'un qui est déjà membre fixe ses rôles.
console-org-add = Ajouter
console-org-delete = Supprimer l'organisation et ses adhésions
console-org-confirm-wrong = Le slug saisi ne correspond pas : rien n'a été supprimé.
console-org-self = Vous ne pouvez pas vous retirer ni retirer votre propre rôle admin ; demandez à un autre administrateur.
console-back-organization = Retour à l'organisation
console-back-organizations = Retour aux organisations
console-none = Aucun.
console-done-revoked = Révoqué.
console-credentials = Identifiants d'administration
console-credentials-intro = Des jetons pour l'API d'administration de ce tenant (scripts, déploiements). Chacun ne vaut que pour ce tenant ; révoqué, il est refusé aussitôt.
console-no-credentials = Aucun identifiant pour l'instant.
console-credential-expires = Expire
console-credential-never = jamais
console-credential-active = actif
console-credential-expired = expiré
console-credential-revoked = révoqué
console-credential-revoke = Révoquer
console-credential-revoke-named = Révoquer { $name }
console-credential-new = Nouvel identifiant
console-credential-name-help = Qui ou quoi le détient (affiché dans les listes et le journal d'audit).
console-credential-days = Valable (en jours ; vide : jusqu'à révocation)
console-credential-scope = Ce qu'il ouvre
console-credential-scope-admin = L'API d'administration
console-credential-scope-admin-hint = Toute l'API d'administration de ce tenant : clients, utilisateurs, groupes, réglages.
console-credential-scope-scim = Provisionnement (SCIM)
console-credential-scope-scim-hint = Le seul service SCIM de ce tenant, pour un SIRH, Entra ID ou Okta ; refusé par l'API d'administration.
console-credential-created = Identifiant créé
console-credential-once = Copiez le jeton maintenant : il n'est affiché qu'une fois et ne peut plus être relu.
console-credential-token = Jeton
console-organization = Organisation
login-password-organization = Laissez le mot de passe vide si votre organisation vous connecte : votre adresse professionnelle vous y mène.
err-password-missing = Veuillez saisir votre mot de passe.
# Organisations : invitations par e-mail, et le choix de l'une à la connexion
org-invitation-title = Invitation à une organisation
org-invitation-heading = Rejoindre { $organization }
org-invitation-roles = Vos rôles dans celle-ci :
org-invitation-accept = Accepter l'invitation
org-invitation-wrong-user = Vous êtes connecté en tant que { $user }, dont l'adresse e-mail vérifiée n'est pas celle à laquelle cette invitation a été envoyée. Connectez-vous avec le compte de cette adresse (l'adresse doit être vérifiée).
org-invitation-switch = Se connecter avec un autre compte
org-invitation-accepted = Vous êtes désormais membre de { $organization }.
err-invitation-unknown = Ce lien d'invitation ne fonctionne pas. Vérifiez qu'il a été copié en entier, ou demandez une nouvelle invitation.
err-invitation-used = Cette invitation a déjà été acceptée.
err-invitation-revoked = Cette invitation a été retirée. Demandez-en une nouvelle à l'organisation.
err-invitation-expired = Cette invitation a expiré. Demandez-en une nouvelle à l'organisation.
err-invitation-form-expired = Cette page a expiré. Ouvrez à nouveau le lien d'invitation.
err-invitation-not-signed-in = La connexion n'a pas abouti. Ouvrez à nouveau le lien d'invitation.
mail-org-invitation-subject = Vous êtes invité à rejoindre une organisation sur { $product }
mail-org-invitation-body = Vous êtes invité à rejoindre { $organization } sur { $product }. Pour accepter, ouvrez ce lien dans les { $days } jours et connectez-vous (ou créez un compte) avec cette adresse e-mail :

    { $link }

    Si vous n'attendiez pas cette invitation, ignorez ce message.
org-choose-heading = Choisissez une organisation
err-org-choose = Choisissez l'une des organisations proposées.
console-organization-required = Exiger une organisation (membres seulement ; un membre de plusieurs en choisit une)
# Groupes et rôles dans la console (issue 32)
console-groups = Groupes
console-groups-intro = Des groupes d'utilisateurs du tenant, qui peuvent contenir d'autres groupes. Les applications reçoivent les groupes d'un utilisateur dans les jetons si le client les demande (sa revendication de groupes), et les rôles qu'un client définit peuvent être donnés à un groupe : chaque membre, directement ou par un groupe contenu, les détient.
console-search-groups = Chercher par nom, identifiant externe ou identifiant
console-no-groups = Aucun groupe pour l'instant.
console-group = Groupe
console-group-heading = Groupe { $group }
console-group-new = Nouveau groupe
console-group-name-help = Unique dans le tenant (sans distinction de casse) ; les applications qui prennent les noms de groupes le reçoivent.
console-group-external-id = Identifiant externe
console-group-external-id-help = Facultatif : l'identifiant sous lequel un système de provisionnement (SCIM) connaît le groupe.
console-group-direct-members = Membres directs
console-group-parents = Membre de
console-group-members = Membres
console-group-members-help = Les utilisateurs et les groupes directement dans ce groupe ; les membres d'un groupe contenu en sont membres aussi.
console-col-kind = Type
console-kind-users = Utilisateur
console-kind-groups = Groupe
console-principal-name = Nom d'utilisateur ou adresse e-mail, ou nom du groupe (exactement)
console-group-delete = Supprimer le groupe, ses appartenances et ses rôles
console-group-confirm-wrong = Le nom saisi ne correspond pas : rien n'a été supprimé.
console-back-group = Retour au groupe
console-back-groups = Retour aux groupes
console-roles = Rôles
console-roles-help = Les rôles que cette application définit, donnés à des utilisateurs ou à des groupes (alors à tous leurs membres). Les jetons pour cette application portent les rôles de l'utilisateur dans la revendication roles.
console-no-roles = Aucun rôle pour l'instant.
console-role-nobody = Personne ne détient encore ce rôle.
console-member-from-directory = (depuis l'annuaire { $directory })
console-done-queued = En file : les changements sont en route.
console-provisioning = Provisionnement (SCIM)
console-provisioning-help = Garder les utilisateurs propres à cette application à jour : Authrim les crée, les modifie, les désactive et les supprime dans le service SCIM de l'application à mesure qu'ils changent ici.
console-provisioning-none = Cette application n'est pas provisionnée.
console-provisioning-set = Provisionner cette application
console-provisioning-change = Modifier le provisionnement
console-provisioning-endpoint = Point d'accès SCIM
console-provisioning-token = Identifiant (jeton bearer)
console-provisioning-token-help = Donné par l'application. Jamais réaffiché ; laisser vide pour garder celui qui est enregistré.
console-provisioning-users = Utilisateurs envoyés
console-provisioning-users-assigned = Ceux qui détiennent un de ses rôles
console-provisioning-users-all = Tous les utilisateurs
console-provisioning-enabled = Activé
console-provisioning-paused = (en pause)
console-provisioning-held = Là-bas maintenant
console-provisioning-counts = { $provisioned } utilisateurs ; { $pending } changements en attente
console-provisioning-last-delivered = Dernier envoi
console-provisioning-last-error = Dernier échec
console-provisioning-never = jamais
console-provisioning-resync = Resynchroniser
console-provisioning-resync-help = La resynchronisation renvoie chaque utilisateur et désactive ceux qui ne sont plus assignés : après avoir corrigé l'identifiant, ou si des données ont changé dans l'application.
console-provisioning-remove = Arrêter le provisionnement
console-role-assign = Donner { $role } à
console-role-assign-button = Donner le rôle
console-role-unassign-named = Supprimer l'attribution de { $role } à { $name }
console-group-remove-named = Supprimer { $name } du groupe
console-role-remove = Supprimer le rôle { $role } et ses attributions
console-role-new = Nouveau rôle
console-role-name = Rôle
console-role-name-help = Jusqu'à 64 lettres, chiffres et _ . : - (la description d'un rôle existant est modifiée).
console-role-description = Description (facultative)
console-role-define = Définir le rôle
console-groups-claim = Groupes et rôles dans les jetons
console-groups-claim-hint = Quels groupes d'un utilisateur cette application reçoit, et sous quels noms de revendications.
console-groups-claim-value = Revendication de groupes
console-groups-claim-none = Aucune
console-groups-claim-names = Noms des groupes
console-groups-claim-ids = Identifiants des groupes
console-groups-assigned-only = Seulement les groupes qui détiennent un rôle de cette application
console-groups-prefixes = Seulement les groupes dont le nom commence par
console-groups-prefixes-hint = Un par ligne (sans distinction de casse) ; vide : tous les groupes.
console-groups-claim-name = Nom de la revendication de groupes
console-roles-claim-name = Nom de la revendication de rôles
console-claim-names-hint = Dans les jetons d'identité et userinfo ; vide : groups et roles.
console-user-groups = Groupes
console-user-groups-direct = Directement dans
console-user-groups-effective = Tous (y compris par des groupes contenus)
console-user-roles = Rôles par application
console-type-saml = Application SAML
console-type-saml-hint = Une application qui ne parle que SAML 2.0 : enregistrée à partir de ses métadonnées ; Authrim est son fournisseur d'identité.
console-saml-new = Nouvelle application SAML
console-saml-settings = Réglages SAML
console-saml-entity = Identifiant d'entité : { $entity }
console-saml-acs = Où vont les réponses :
console-saml-metadata = Les métadonnées SAML de l'application (XML)
console-saml-metadata-hint = Collez son EntityDescriptor. Son identifiant d'entité, ses services consommateurs d'assertions (HTTP-POST), son adresse de déconnexion et ses certificats en sont tirés. Les métadonnées d'Authrim sont à /saml/metadata.
console-saml-metadata-missing = Collez les métadonnées SAML de l'application.
console-saml-name-id = NameID
console-saml-attributes = Attributs
console-saml-attributes-hint = Un par ligne : nom de l'attribut=revendication, comme mail=email. Revendications : { $claims }.
console-saml-attributes-bad = Écrivez chaque attribut sous la forme nom=revendication, un par ligne.
console-saml-signing = Signature et chiffrement
console-saml-sign-response = Signer la réponse en plus de l'assertion
console-saml-require-signed = Refuser les requêtes non signées
console-saml-encrypt = Chiffrer les assertions (il faut un certificat de chiffrement dans les métadonnées)
console-saml-idp-initiated = La présenter sur la page d'accueil, pour s'y connecter de là
console-saml-relay-state = Où arriver dans l'application quand on s'y connecte d'ici (RelayState)
console-saml-consent = Demander le consentement de l'utilisateur avant le premier envoi de ses attributs
