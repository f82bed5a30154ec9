# Les pages d'Authrim en français.
language-name = Français

continue-to = pour continuer vers { $client }
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
consent-document-host = Cette application n'est pas enregistrée ici ; elle est identifiée par son adresse sur <strong>{ $host }</strong>.
consent-asks = { $client } demande à :
consent-resources = Avec accès à :
consent-allow = Autoriser
consent-deny = Refuser
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

form-post-title = Retour à l'application
form-post-heading = Retour à l'application

landing-title = Bienvenue
landing-heading = Bienvenue
landing-intro = Ceci est un service de connexion OpenID Connect. Les applications vous y envoient pour vous connecter.
landing-account = Votre compte : clés d'accès, applications d'authentification, codes de récupération
landing-discovery = Document de découverte (pour les développeurs)

demo-title = Connecté
demo-heading = Connecté
demo-intro = Authrim a renvoyé un code d'autorisation. Échangez-le dans les { $seconds } secondes, avec le secret client affiché dans le terminal où le serveur a démarré à la place de <code>CLIENT_SECRET</code> :
demo-copy = Copier la commande

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
password-new = Nouveau mot de passe (au moins 8 caractères)
password-confirm = Nouveau mot de passe, à nouveau
password-submit = Changer le mot de passe
password-mismatch = Les deux nouveaux mots de passe ne sont pas identiques.
password-current-wrong = Le mot de passe actuel n'est pas le bon.
password-too-weak = Le nouveau mot de passe doit compter de 8 à 1024 caractères.

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
